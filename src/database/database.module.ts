import { Global, Inject, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectConnection, MongooseModule } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import { AppConfig } from '../config/app-config.js';
import { DatabaseTarget } from './database-target.js';
import { DataMigration, DataMigrationSchema } from './migrations/data-migration.schema.js';
import { DataMigrations } from './migrations/data-migrations.js';
import { dropReplacedIndexes } from './migrations/replaced-indexes.js';

@Module({
  providers: [{ provide: DatabaseTarget, inject: [AppConfig], useFactory: DatabaseTarget.resolve }],
  exports: [DatabaseTarget],
})
class DatabaseTargetModule {}

/**
 * Connects Mongoose to MONGODB_URI or to the embedded engine, makes sure every declared index exists
 * before the app serves requests (unique rules must hold from the first request), then drops the ones this version
 * replaced (REPLACED_INDEXES), and on shutdown
 * closes the connection before stopping an embedded engine. DataMigrations lets modules bring older data up to date.
 */
@Global()
@Module({
  imports: [
    DatabaseTargetModule,
    MongooseModule.forRootAsync({
      imports: [DatabaseTargetModule],
      inject: [DatabaseTarget],
      useFactory: (target: DatabaseTarget) => ({ uri: target.uri, autoIndex: true, serverSelectionTimeoutMS: 10_000 }),
    }),
    MongooseModule.forFeature([{ name: DataMigration.name, schema: DataMigrationSchema }]),
  ],
  providers: [DataMigrations],
  exports: [DatabaseTargetModule, DataMigrations],
})
export class DatabaseModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @InjectConnection() private readonly connection: Connection,
    @Inject(DatabaseTarget) private readonly target: DatabaseTarget,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await Promise.all(Object.values(this.connection.models).map((model) => model.init()));
    const db = this.connection.db;
    if (db) await dropReplacedIndexes(db);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.connection.close();
    await this.target.embedded?.stop();
  }
}
