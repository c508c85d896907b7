import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { Types } from 'mongoose';
import { DataMigrations } from '../database/migrations/data-migrations.js';
import { ContactsRepository } from './contacts.repository.js';
import { nameKeyOf } from './name-key.js';

const BACKFILL_BATCH = 500;

/** Gives contacts stored before duplicates were looked for their name key, once per database. */
@Injectable()
export class ContactNameKeys implements OnApplicationBootstrap {
  constructor(
    private readonly contacts: ContactsRepository,
    private readonly migrations: DataMigrations,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.migrations.runOnce('contacts.nameKey', async () => {
      let after: Types.ObjectId | null = null;
      for (;;) {
        const batch = await this.contacts.withoutNameKey(after, BACKFILL_BATCH);
        if (batch.length === 0) return;
        const keys = batch.map(({ _id, name }) => ({ _id, nameKey: nameKeyOf(name) }));
        await this.contacts.setNameKeys(keys.filter((key): key is { _id: Types.ObjectId; nameKey: string } => key.nameKey !== undefined));
        after = batch[batch.length - 1]._id;
      }
    });
  }
}
