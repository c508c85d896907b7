import { localMinuteOf } from '../common/calendar-dates.js';
import type { SenderType } from '../messages/message.schema.js';
import type { MessageView } from '../messages/message.view.js';

/**
 * A transcript's text form (contract section 15): one line per message,
 * `[YYYY-MM-DD HH:MM] <name> (<contact|agent|bot>): <text or [media file name]>`, times in the company's time zone.
 * Line breaks inside a message are written `\n`, so that each message stays on its line; a private note's text
 * starts with `[private note]`.
 */

/** What a message says in a transcript: its text, or its media's file name in brackets (then its caption). */
export function transcriptBody(message: Pick<MessageView, 'text' | 'caption' | 'media' | 'private'>): string {
  const parts: string[] = [];
  if (message.private) parts.push('[private note]');
  if (message.media) parts.push(`[${message.media.fileName}]`);
  const words = message.text ?? message.caption;
  if (words) parts.push(words);
  return parts.join(' ').replace(/\r\n|\r|\n/g, '\\n');
}

export function transcriptLine(
  message: Pick<MessageView, 'text' | 'caption' | 'media' | 'private' | 'createdAt'>,
  sender: { name: string; type: SenderType },
  timeZone: string,
): string {
  const name = sender.name.replace(/[\r\n]+/g, ' ');
  return `[${localMinuteOf(new Date(message.createdAt), timeZone)}] ${name} (${sender.type}): ${transcriptBody(message)}\n`;
}
