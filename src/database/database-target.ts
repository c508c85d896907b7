import { Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import type { EmbeddedMongo } from '@parley/embedded-mongo';

export const EMBEDDED_DATABASE_NAME = 'parley';

/** Where Mongoose connects: MONGODB_URI, or an embedded engine started for this process. */
export class DatabaseTarget {
  constructor(
    readonly uri: string,
    readonly embedded?: EmbeddedMongo,
    /** The embedded engine's data directory; undefined when its data lives in memory (or on MONGODB_URI). */
    readonly dataDir?: string,
  ) {}

  get isEmbedded(): boolean {
    return this.embedded !== undefined;
  }

  static async resolve(config: AppConfig): Promise<DatabaseTarget> {
    if (config.mongodbUri) return new DatabaseTarget(config.mongodbUri);
    const logger = new Logger('Database');
    const dataDir = config.embeddedDataDir;
    // Loaded only here: on MONGODB_URI the process never holds the engine's code, nor its own copy of bson
    // (the ES build, whose 17 MiB serialization buffer is allocated at load, beside the driver's CommonJS one).
    const { startEmbeddedMongo } = await import('@parley/embedded-mongo');
    const engine = await startEmbeddedMongo({ dataDir, log: (line) => logger.log(line) });
    logger.warn(
      `MONGODB_URI is not set: using the EMBEDDED MongoDB-compatible engine at ${engine.uri}, ` +
        (dataDir
          ? `with its data in ${dataDir} (EMBEDDED_DATA_DIR). Set MONGODB_URI to use a real MongoDB.`
          : 'in memory (EMBEDDED_DATA_DIR=memory): every record is lost when the process stops. Set MONGODB_URI to use a real MongoDB.'),
    );
    return new DatabaseTarget(`${engine.uri}${EMBEDDED_DATABASE_NAME}`, engine, dataDir);
  }
}
