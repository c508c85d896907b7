import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { Channel, ChannelType } from './channel.schema.js';

/** A channel record (contract section 17). */
export class ChannelView {
  /** @example 6650f0c2a1b2c3d4e5f60730 */
  id: string;
  /**
   * What conversations on this channel carry in `channel`
   * @example whatsapp
   */
  key: string;
  type: ChannelType;
  /** @example "WhatsApp Business" */
  name: string;
  /**
   * The company's own address on the channel (phone number, e-mail address, page id)
   * @example +14155550100
   */
  address: string | null;
  /**
   * Hours after the contact's last message during which free-form messages may be sent; outside it only approved
   * templates go through. null: the channel has no window
   * @example 24
   */
  replyWindowHours: number | null;
  /** false: switched off for new business: proactive messages (`POST /v1/messages`) on it answer 409; replies in its open conversations go on, under its reply window */
  isActive: boolean;
  /** The team whose queue conversations opened on it join; null: the company queue */
  teamId: string | null;
  createdAt: string;
  updatedAt: string;

  static from(channel: Stored<Channel>): ChannelView {
    return {
      id: channel._id.toHexString(),
      key: channel.key,
      type: channel.type,
      name: channel.name,
      address: channel.address ?? null,
      replyWindowHours: channel.replyWindowHours ?? null,
      isActive: channel.isActive,
      teamId: channel.teamId?.toHexString() ?? null,
      createdAt: channel.createdAt.toISOString(),
      updatedAt: channel.updatedAt.toISOString(),
    };
  }
}

/** The answer of DELETE /v1/channels/:id. */
export class DeletedChannelView {
  /** @example 6650f0c2a1b2c3d4e5f60730 */
  id: string;
  /** @example true */
  deleted: true;
}
