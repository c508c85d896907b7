import { Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { ATTRIBUTE_VALUES_REMOVED, type AttributeValuesRemoved } from '../attributes/attribute-values.js';
import { ConversationsRepository } from './conversations.repository.js';

/** A deleted conversation attribute definition's values leave every conversation of the company before it answers. */
@Injectable()
export class ConversationAttributes {
  constructor(private readonly conversations: ConversationsRepository) {}

  @OnEvent(ATTRIBUTE_VALUES_REMOVED, { suppressErrors: false })
  async removeValues(removed: AttributeValuesRemoved): Promise<void> {
    if (removed.model === 'conversation') await this.conversations.unsetAttribute(removed.companyId, removed.key);
  }
}
