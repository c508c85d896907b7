import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { DataMigration } from './data-migration.schema.js';

/**
 * Brings data written by an earlier version up to what this one reads, once per database: a migration that has
 * completed is recorded and never runs again, so a start costs one read per migration. A migration must be safe to
 * run twice (several processes may start at once, or one may die half-way): it only fills in what is missing.
 */
@Injectable()
export class DataMigrations {
  constructor(@InjectModel(DataMigration.name) private readonly model: Model<DataMigration>) {}

  async runOnce(name: string, migrate: () => Promise<void>): Promise<void> {
    if (await this.model.exists({ _id: name })) return;
    await migrate();
    await this.model.updateOne({ _id: name }, { $setOnInsert: { completedAt: new Date() } }, { upsert: true }).exec();
  }
}
