import { isoTime } from '../common/iso-time.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { DeliveryStatus, Message, MessageDelivery, MessageDirection, MessageType, SenderType } from './message.schema.js';

export class MediaView {
  /** @example 6650f0c2a1b2c3d4e5f60720 */
  id: string;
  /** @example receipt.pdf */
  fileName: string;
  /** @example application/pdf */
  mimeType: string;
  /** @example 48213 */
  size: number;
  /**
   * GET it with your bearer token
   * @example /v1/media/6650f0c2a1b2c3d4e5f60720
   */
  url: string;
  /**
   * REST answers only (never in events or webhooks): a link that serves the file without credentials until
   * `downloadUrlExpiresAt`, for `<img src>` and the like (relative, like `url`). Changed: 403; expired: 410
   * @example /v1/media/signed/ZlDwwqGyw9TlhvBxZlDwwqGyw9TlhvByZlEI8A.3q2-7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA
   */
  downloadUrl?: string;
  /** When `downloadUrl` stops working: at least MEDIA_URL_TTL_SECONDS (default 3600) after the answer */
  downloadUrlExpiresAt?: string;
}

/** The template a `template` message sent (contract section 17). */
export class MessageTemplateUseView {
  /** @example 6650f0c2a1b2c3d4e5f60740 */
  id: string;
  /** @example order_shipped */
  name: string;
  /** @example en-US */
  language: string;
  /**
   * The values of its placeholders, `{{1}}` first
   * @example ["Grace", "1042"]
   */
  variables: string[];
}

export class MessageDeliveryErrorView {
  /**
   * The channel's error code
   * @example 131026
   */
  code: string;
  /** @example "Message undeliverable" */
  message: string;
}

/** An outbound message's delivery, as the channel connector reported it (contract section 12). */
export class MessageDeliveryView {
  /**
   * `pending` until the connector reports; then only forward along pending → sent → delivered → read (steps may be
   * skipped), or `failed` from pending or sent
   */
  status: DeliveryStatus;
  /** When the status was reached: the report's occurredAt (never before the previous status), else when it arrived */
  updatedAt: string;
  /**
   * The channel's own id of the message, once a report gave it
   * @example wamid.HBgLMTQxNTU1NTI2NzEVAgARGBI
   */
  externalId?: string;
  /** Why it failed, when the failure report said */
  error?: MessageDeliveryErrorView;
}

/** The stored fields MessageView shows (with `_id`): what a read made only for the view projects. */
export const MESSAGE_VIEW_FIELDS = {
  conversationId: 1,
  direction: 1,
  type: 1,
  text: 1,
  caption: 1,
  media: 1,
  template: 1,
  senderType: 1,
  senderId: 1,
  externalId: 1,
  delivery: 1,
  private: 1,
  mentions: 1,
  createdAt: 1,
} as const;

/** A message as the API and the webhook payloads show it. */
export class MessageView {
  /** @example 6650f0c2a1b2c3d4e5f60721 */
  id: string;
  /** @example 6650f0c2a1b2c3d4e5f60718 */
  conversationId: string;
  direction: MessageDirection;
  type: MessageType;
  /** The text; of a `template` message, its body with the variables in place */
  text: string | null;
  caption: string | null;
  media: MediaView | null;
  /** Of a `template` message: which template, in which language, with what variables; null otherwise */
  template: MessageTemplateUseView | null;
  senderType: SenderType;
  senderId: string | null;
  /**
   * Inbound: the channel's own id of the message, when the connector sent one; null otherwise
   * @example wamid.HBgLMTQxNTU1NTI2NzEVAgASGBQ
   */
  externalId: string | null;
  /** Outbound: its delivery on the channel; null on inbound messages and private notes */
  delivery: MessageDeliveryView | null;
  /** A private note (`direction: internal`), never sent to the contact; false for every other message */
  private: boolean;
  /** A private note's mentioned agents (ids); empty for every other message */
  mentions: string[];
  createdAt: string;

  static from(message: Stored<Message>): MessageView {
    const media = message.media;
    return {
      id: message._id.toHexString(),
      conversationId: message.conversationId.toHexString(),
      direction: message.direction,
      type: message.type,
      text: message.text ?? null,
      caption: message.caption ?? null,
      media: media
        ? {
            id: media.id.toHexString(),
            fileName: media.fileName,
            mimeType: media.mimeType,
            size: media.size,
            url: `/v1/media/${media.id.toHexString()}`,
          }
        : null,
      template: message.template
        ? {
            id: message.template.id.toHexString(),
            name: message.template.name,
            language: message.template.language,
            variables: message.template.variables,
          }
        : null,
      senderType: message.senderType,
      senderId: message.senderId?.toHexString() ?? null,
      externalId: message.externalId ?? null,
      delivery: message.direction === 'outbound' ? deliveryView(message.delivery, message.createdAt) : null,
      private: message.private ?? false,
      mentions: message.mentions?.map((id) => id.toHexString()) ?? [],
      createdAt: isoTime(message.createdAt),
    };
  }
}

/** An outbound message stored before delivery receipts existed has no delivery: pending since it was sent. */
function deliveryView(delivery: MessageDelivery | undefined, sentAt: Date): MessageDeliveryView {
  if (!delivery) return { status: 'pending', updatedAt: isoTime(sentAt) };
  const view: MessageDeliveryView = { status: delivery.status, updatedAt: isoTime(delivery.updatedAt) };
  if (delivery.externalId) view.externalId = delivery.externalId;
  if (delivery.error) view.error = { code: delivery.error.code, message: delivery.error.message };
  return view;
}
