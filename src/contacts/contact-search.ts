import type { QueryFilter } from 'mongoose';
import { escapeRegExp } from '../common/escape-regexp.js';
import type { Contact } from './contact.schema.js';

/** What people type between the digits of a phone number; stored phones are E.164 ("+" and digits). */
const PHONE_PUNCTUATION = /[\s\-().+]/g;

/**
 * The list filter: every listed tag (`$all`), and the search text anywhere in the name or e-mail
 * (case-insensitive, taken literally) or, once phone punctuation is removed, in the phone. The
 * phone is left out when the text has no digits left or anything but digits, which it could not match.
 */
export function contactListFilter(options: { search?: string; tags?: string[] }): QueryFilter<Contact> {
  const filter: Record<string, unknown> = {};
  if (options.tags?.length) filter.tags = { $all: options.tags };
  if (options.search) {
    const text = new RegExp(escapeRegExp(options.search), 'i');
    const anyOf: Record<string, RegExp>[] = [{ name: text }, { email: text }];
    const digits = options.search.replace(PHONE_PUNCTUATION, '');
    if (/^\d+$/.test(digits)) anyOf.push({ phone: new RegExp(digits) });
    filter.$or = anyOf;
  }
  return filter as QueryFilter<Contact>;
}
