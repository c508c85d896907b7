import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import type { Types } from 'mongoose';
import type { AttributeType } from '../attributes/attribute-definition.schema.js';
import { AttributeDefinitionsService } from '../attributes/attribute-definitions.service.js';
import { ATTRIBUTE_VALUES_REMOVED, type AttributeValuesRemoved } from '../attributes/attribute-values.js';
import { DataMigrations } from '../database/migrations/data-migrations.js';
import { ContactsRepository } from './contacts.repository.js';

const BATCH = 500;

/** The type a stored value implies: numbers and booleans keep theirs, anything else is text. */
function typeOf(value: unknown): AttributeType {
  if (typeof value === 'number') return 'number';
  return typeof value === 'boolean' ? 'boolean' : 'text';
}

/**
 * Contacts' side of custom attributes: a deleted definition's values leave every contact, and the keys contacts held
 * before definitions existed get one, once (DataMigrations): `number` or `boolean` when every value of the key in the
 * company is one, else `text`, so nothing stored becomes unwritable. Safe to run twice: it defines only what is missing.
 */
@Injectable()
export class ContactAttributes implements OnApplicationBootstrap {
  constructor(
    private readonly contacts: ContactsRepository,
    private readonly definitions: AttributeDefinitionsService,
    private readonly migrations: DataMigrations,
  ) {}

  @OnEvent(ATTRIBUTE_VALUES_REMOVED, { suppressErrors: false })
  async removeValues(removed: AttributeValuesRemoved): Promise<void> {
    if (removed.model === 'contact') await this.contacts.unsetAttribute(removed.companyId, removed.key);
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.migrations.runOnce('contacts.attribute-definitions', () => this.defineStoredKeys());
  }

  /** Walks every contact with attributes once, then defines each company's keys with the type their values imply. */
  async defineStoredKeys(): Promise<void> {
    const types = new Map<string, { companyId: Types.ObjectId; key: string; type: AttributeType | null }>();
    let after: Types.ObjectId | null = null;
    for (;;) {
      const batch = await this.contacts.withAttributesAfter(after, BATCH);
      if (batch.length === 0) break;
      after = batch[batch.length - 1]._id;
      for (const contact of batch) {
        for (const [key, value] of Object.entries(contact.attributes ?? {})) {
          if (value === null || value === undefined) continue;
          const id = `${contact.companyId.toHexString()}/${key}`;
          const seen = types.get(id);
          const type = typeOf(value);
          if (!seen) types.set(id, { companyId: contact.companyId, key, type });
          else if (seen.type !== type) seen.type = 'text';
        }
      }
    }
    for (const { companyId, key, type } of types.values()) await this.definitions.defineIfMissing(companyId, key, type ?? 'text');
  }
}
