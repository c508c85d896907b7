import type { Types } from 'mongoose';
import type { ConversationLastMessage } from '../conversations/conversation.schema.js';
import type { Message, MessageType } from './message.schema.js';

/** How long a list row's preview of a message may be, in characters (code points: an emoji is never cut in half). */
export const PREVIEW_LENGTH = 160;

/** The preview of a message (contract section 14): its text or caption, cut to PREVIEW_LENGTH; `[image]` for media without one. */
export function messagePreview(message: { type: MessageType; text: string | null; caption: string | null }): string {
  const words = message.text || message.caption;
  if (!words) return `[${message.type}]`;
  if (words.length <= PREVIEW_LENGTH) return words;
  return [...words].slice(0, PREVIEW_LENGTH).join('');
}

/** A message as its conversation shows it in `lastMessage`: the message `id`, stored (or to be stored) at `createdAt`. */
export function lastMessageOf(
  id: Types.ObjectId,
  message: Pick<Message, 'direction' | 'senderType' | 'type' | 'text' | 'caption'>,
  createdAt: Date,
): ConversationLastMessage {
  return { id, direction: message.direction, senderType: message.senderType, type: message.type, preview: messagePreview(message), createdAt };
}
