import { mongo } from 'mongoose';

/**
 * Keys whose values are a contact's words or identity wherever they appear in an event's data; `changes` holds
 * changed fields' values before and after (contact.updated, conversation.updated: a name, an e-mail, a subject).
 */
const NULLED_KEYS = new Set(['contact', 'text', 'caption', 'preview', 'comment', 'subject', 'media', 'lastMessage', 'changes']);

/**
 * An event's data (or a webhook payload) without the contact's personal data and message texts: the ids, types,
 * statuses and times stay, so what reacted to it still makes sense of it.
 */
export function scrubEventData(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => scrubEventData(item));
  if (value === null || typeof value !== 'object' || value instanceof Date || value instanceof mongo.ObjectId) return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([key, item]) => {
      if (NULLED_KEYS.has(key)) return [key, null];
      if (key === 'variables' && Array.isArray(item)) return [key, []];
      return [key, scrubEventData(item)];
    }),
  );
}
