import { ApiProperty } from '@nestjs/swagger';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import {
  MESSAGE_DIRECTIONS,
  MESSAGE_TYPES,
  SENDER_TYPES,
  type Message,
  type MessageDirection,
  type MessageType,
  type SenderType,
} from './message.schema.js';

export class MediaView {
  @ApiProperty({ example: '6650f0c2a1b2c3d4e5f60720' }) id: string;
  @ApiProperty({ example: 'receipt.pdf' }) fileName: string;
  @ApiProperty({ example: 'application/pdf' }) mimeType: string;
  @ApiProperty({ example: 48213 }) size: number;
  @ApiProperty({ example: '/v1/media/6650f0c2a1b2c3d4e5f60720', description: 'GET it with your bearer token' })
  url: string;
}

/** A message as the API and the webhook payloads show it. */
export class MessageView {
  @ApiProperty({ example: '6650f0c2a1b2c3d4e5f60721' }) id: string;
  @ApiProperty({ example: '6650f0c2a1b2c3d4e5f60718' }) conversationId: string;
  @ApiProperty({ enum: MESSAGE_DIRECTIONS }) direction: MessageDirection;
  @ApiProperty({ enum: MESSAGE_TYPES }) type: MessageType;
  @ApiProperty({ type: String, nullable: true }) text: string | null;
  @ApiProperty({ type: String, nullable: true }) caption: string | null;
  @ApiProperty({ type: MediaView, nullable: true }) media: MediaView | null;
  @ApiProperty({ enum: SENDER_TYPES }) senderType: SenderType;
  @ApiProperty({ type: String, nullable: true }) senderId: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;

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
