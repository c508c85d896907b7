import { ApiProperty } from '@nestjs/swagger';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import {
  ASSIGNER_KINDS,
  CONVERSATION_STATUSES,
  PRIORITIES,
  type AssignerKind,
  type Conversation,
  type ConversationStatus,
  type Priority,
} from './conversation.schema.js';

const iso = (date: Date | null | undefined) => date?.toISOString() ?? null;

export class AssignedByView {
  @ApiProperty({ enum: ASSIGNER_KINDS, description: 'agent (through the API), flow (a flow step) or auto' })
  kind: AssignerKind;
  @ApiProperty({ type: String, nullable: true, description: "The agent's or flow's id; null for auto" })
  id: string | null;
}

/** A conversation as the API and the webhook payloads show it. */
export class ConversationView {
  @ApiProperty({ example: '6650f0c2a1b2c3d4e5f60718' }) id: string;
  @ApiProperty({ example: '6650f0c2a1b2c3d4e5f60719' }) contactId: string;
  @ApiProperty({ example: 'whatsapp' }) channel: string;
  @ApiProperty({ enum: CONVERSATION_STATUSES }) status: ConversationStatus;
  @ApiProperty({ enum: PRIORITIES }) priority: Priority;
  @ApiProperty({ type: String, nullable: true }) assignedAgentId: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) assignedAt: string | null;
  @ApiProperty({ type: AssignedByView, nullable: true }) assignedBy: AssignedByView | null;
  @ApiProperty({ type: [String], example: ['vip'] }) tags: string[];
  @ApiProperty({ type: String, nullable: true }) subject: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) lastMessageAt: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'The first outbound message (agent or bot); for a conversation you started with `message`, that message',
  })
  firstResponseAt: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When it last entered the queue' })
  queuedAt: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) closedAt: string | null;
  @ApiProperty({ type: String, nullable: true }) closeReason: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;

  static from(conversation: Stored<Conversation>): ConversationView {
    return {
      id: conversation._id.toHexString(),
      contactId: conversation.contactId.toHexString(),
      channel: conversation.channel,
      status: conversation.status,
      priority: conversation.priority,
      assignedAgentId: conversation.assignedAgentId?.toHexString() ?? null,
      assignedAt: iso(conversation.assignedAt),
      assignedBy: conversation.assignedBy
        ? { kind: conversation.assignedBy.kind, id: conversation.assignedBy.id?.toHexString() ?? null }
        : null,
      tags: conversation.tags,
      subject: conversation.subject ?? null,
      lastMessageAt: iso(conversation.lastMessageAt),
      firstResponseAt: iso(conversation.firstResponseAt),
      queuedAt: iso(conversation.queuedAt),
      closedAt: iso(conversation.closedAt),
      closeReason: conversation.closeReason ?? null,
      createdAt: conversation.createdAt.toISOString(),
      updatedAt: conversation.updatedAt.toISOString(),
    };
  }
}
