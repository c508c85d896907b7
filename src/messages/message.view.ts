import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { Message, MessageDirection, MessageType, SenderType } from './message.schema.js';

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
}

/** A message as the API and the webhook payloads show it. */
export class MessageView {
  /** @example 6650f0c2a1b2c3d4e5f60721 */
  id: string;
  /** @example 6650f0c2a1b2c3d4e5f60718 */
  conversationId: string;
  direction: MessageDirection;
  type: MessageType;
  text: string | null;
  caption: string | null;
  media: MediaView | null;
  senderType: SenderType;
  senderId: string | null;
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
      senderType: message.senderType,
      senderId: message.senderId?.toHexString() ?? null,
      createdAt: message.createdAt.toISOString(),
    };
  }
}
