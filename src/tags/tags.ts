import { BadRequestException } from '@nestjs/common';

/** The one rule for the tags of contacts and conversations, and for the flow step `add_tags`. */
export const MAX_TAGS = 50;
export const MAX_TAG_LENGTH = 50;

/** Trims each tag, drops blank ones and repeats (keeping the first occurrence): " vip", "vip" and "" are one tag. */
export function normalizeTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map((tag) => tag.trim()).filter((tag) => tag.length > 0))];
}

/** The tags a record has after `added` join `current`; more than MAX_TAGS in all is a 400. */
export function mergeTags(current: readonly string[], added: readonly string[]): string[] {
  const merged = normalizeTags([...current, ...added]);
  if (merged.length > MAX_TAGS) {
    throw new BadRequestException(`A record can have at most ${MAX_TAGS} tags; adding ${added.join(', ')} would make ${merged.length}`);
  }
  return merged;
}
