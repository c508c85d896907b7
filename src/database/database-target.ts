import { Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { startEmbeddedMongo, type EmbeddedMongo } from '../embedded-mongo/index.js';

export const EMBEDDED_DATABASE_NAME = 'parley';

/** Where Mongoose connects: MONGODB_URI, or an embedded engine started for this process. */
export class DatabaseTarget {
  constructor(
    readonly uri: string,
    readonly embedded?: EmbeddedMongo,
  ) {}

  get isEmbedded(): boolean {
    return this.embedded !== undefined;
  }

  static async resolve(config: AppConfig): Promise<DatabaseTarget> {
    if (config.mongodbUri) return new DatabaseTarget(config.mongodbUri);
    const engine = await startEmbeddedMongo();
    new Logger('Database').warn(
      `MONGODB_URI is not set: using the EMBEDDED in-memory MongoDB-compatible engine at ${engine.uri}. ` +
        'Every record is lost when the process stops; set MONGODB_URI to use a real MongoDB.',
    );
    return new DatabaseTarget(`${engine.uri}${EMBEDDED_DATABASE_NAME}`, engine);
  }
}
