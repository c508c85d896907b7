import type { SenderType } from '../messages/message.schema.js';
import type { MessageView } from '../messages/message.view.js';

/**
 * A transcript's text form (contract section 15): one line per message,
 * `[YYYY-MM-DD HH:MM] <name> (<contact|agent|bot>): <text or [media file name]>`, times in the company's time zone.
 * Line breaks inside a message are written `\n`, so that each message stays on its line; a private note's text
 * starts with `[private note]`.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** `YYYY-MM-DD HH:MM` of `at` in `timeZone` (an IANA name, as settings hold it). */
export function transcriptTime(at: Date, timeZone: string): string {
  const parts = Object.fromEntries(formatterFor(timeZone).formatToParts(at).map((part) => [part.type, part.value]));
  return `${parts.year.padStart(4, '0')}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`;
}

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
  return `[${transcriptTime(new Date(message.createdAt), timeZone)}] ${name} (${sender.type}): ${transcriptBody(message)}\n`;
}
