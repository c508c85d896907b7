import { ConflictException, ForbiddenException, Injectable } from '@nestjs/common';
import { ContactIdentities } from '../contacts/contact-identities.js';
import { channelOf } from '../channels/channel-key.js';
import { ConversationOpenings } from '../conversations/conversation-openings.js';
import { duplicateKeyIndex, isDuplicateKeyError } from '../database/mongo-errors.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { scopeAllows, type ChannelScope } from '../events/event-channel.js';
import { alreadyUsed, MediaUploadsService } from '../media/media-uploads.service.js';
import { ONE_MESSAGE_PER_MEDIA } from '../messages/message.schema.js';
import { MessagesService, type DeliveredMessage, type InboundInput } from '../messages/messages.service.js';
import type { InboundMessageDto } from './dto/inbound-message.dto.js';

/** How often a message looks for the contact's open conversation (opening one after each miss): a close may race it. */
const DELIVERY_ATTEMPTS = 4;

/** A stored inbound message; `duplicate` when its `externalId` had been stored before (nothing stored now). */
export interface ReceivedMessage extends DeliveredMessage {
  duplicate: boolean;
}

/** The refusal of a channel a channel-scoped key does not hold. */
function channelRefused(channel: string, scope: readonly string[]): ForbiddenException {
  return new ForbiddenException(`This API key is limited to the channels ${scope.join(', ')}; not ${channel}`);
}

/**
 * A message from a contact on a channel (Interface B): finds or creates the contact, finds its open
 * conversation on the channel or opens one (never two, even under concurrent messages), stores the
 * message. A closed conversation is never reopened: the message goes to a new one. A message whose
 * `externalId` is already stored on the channel is a connector's retry: it answers the stored one. A message
 * with a file names an upload (`mediaId`), which is checked and held before anything is written.
 */
@Injectable()
export class InboundMessagesService {
  constructor(
    private readonly contacts: ContactIdentities,
    private readonly openings: ConversationOpenings,
    private readonly messages: MessagesService,
    private readonly media: MediaUploadsService,
  ) {}

  /** `scope`: the channels the caller's key is limited to (403 for another). */
  async receive(companyId: CompanyId, dto: InboundMessageDto, scope: ChannelScope = null): Promise<ReceivedMessage> {
    const channel = channelOf(dto.channel);
    if (!scopeAllows(scope, channel)) throw channelRefused(channel, scope!);
    // A retry after the first was stored (the usual case) touches nothing: no contact, conversation or write.
    const stored = await this.storedDuplicate(companyId, channel, dto.externalId);
    if (stored) return stored;
    const input: InboundInput = { text: dto.text, externalId: dto.externalId };
    if (dto.mediaId !== undefined) {
      try {
        input.media = { ...(await this.media.attach(companyId, dto.mediaId, dto.type)), caption: dto.caption };
      } catch (refusal) {
        // A repeat arriving while the first is being stored finds the file used by that very message.
        const winner = await this.storedDuplicate(companyId, channel, dto.externalId);
        if (winner) return winner;
        throw refusal;
      }
    }
    const contact = await this.contacts.findOrCreateByIdentity(companyId, dto.from, channel);
    for (let attempt = 0; attempt < DELIVERY_ATTEMPTS; attempt += 1) {
      // Usually the contact's open conversation takes the message in the same write that finds it.
      let delivered: DeliveredMessage | null;
      try {
        delivered = await this.messages.receive(companyId, contact._id, channel, input);
      } catch (error) {
        // A concurrent repeat stored it first: a unique index refused this one, with its event.
        if (!isDuplicateKeyError(error)) throw error;
        const winner = await this.storedDuplicate(companyId, channel, dto.externalId);
        if (winner) return winner;
        if (dto.mediaId !== undefined && duplicateKeyIndex(error) === ONE_MESSAGE_PER_MEDIA) throw alreadyUsed(dto.mediaId);
        throw error;
      }
      if (delivered) return { ...delivered, duplicate: false };
      await this.openings.openIfNone(companyId, contact, channel);
    }
    throw new ConflictException('The conversation kept closing while the message was stored; send it again');
  }

  private async storedDuplicate(companyId: CompanyId, channel: string, externalId: string | undefined): Promise<ReceivedMessage | null> {
    if (externalId === undefined) return null;
    const stored = await this.messages.findByExternalId(companyId, channel, externalId);
    return stored && { ...stored, duplicate: true };
  }
}
