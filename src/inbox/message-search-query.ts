import { Types } from 'mongoose';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';

/**
 * The `$search` string of a search box's text: each `"quoted phrase"` as written and each other word, quoted too, since
 * MongoDB's text search matches a document holding any one plain word but every quoted phrase (the words of the
 * phrases are what its index is read for, folded alike for case and diacritics). A word is what lies between
 * whitespace, less the punctuation around it (`order#123` stays whole, `"(refund)"` is `refund`). Null when the text
 * holds no word at all: nothing can match.
 */
export function textSearchOf(q: string): string | null {
  const phrases: string[] = [];
  const rest = q.replace(/"([^"]*)"/g, (_match, phrase: string) => {
    if (phrase.trim()) phrases.push(phrase);
    return ' ';
  });
  for (const chunk of rest.split(/\s+/)) {
    const word = chunk.replace(/"/g, '').replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
    if (word) phrases.push(word);
  }
  return phrases.length ? phrases.map((phrase) => `"${phrase}"`).join(' ') : null;
}

/** Where a search's next page starts: the last hit's time and id (hits are newest first). */
export interface SearchPosition {
  createdAt: Date;
  id: Types.ObjectId;
}

const VERSION = 's1';

export function encodeSearchCursor(position: SearchPosition): string {
  return Buffer.from([VERSION, String(position.createdAt.getTime()), position.id.toHexString()].join('.')).toString('base64url');
}

export function decodeSearchCursor(cursor: string): SearchPosition {
  const [version, millis, id, ...rest] = Buffer.from(cursor, 'base64url').toString().split('.');
  if (version !== VERSION || rest.length > 0 || !/^\d{1,16}$/.test(millis ?? '') || !/^[0-9a-f]{24}$/.test(id ?? '')) {
    throw new RequestValidationException([{ field: 'cursor', message: 'cursor is not a cursor of this search: pass back a nextCursor unchanged' }]);
  }
  return { createdAt: new Date(Number(millis)), id: new Types.ObjectId(id) };
}
