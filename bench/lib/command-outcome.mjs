// What a database command's reply says it did: the terms in which capture-writes.mjs records the app's commands and
// bare-writes.server.mjs checks that its replay of them did the same, so they must be one definition.

/** `ok`, `n` and `nModified` as the reply has them, and `found`: the documents a find or findAndModify answered. */
export function commandOutcome(reply) {
  const { ok, n, nModified } = reply;
  const seen = { ok, ...(n === undefined ? {} : { n }), ...(nModified === undefined ? {} : { nModified }) };
  if (reply.cursor) seen.found = reply.cursor.firstBatch.length;
  if ('value' in reply) seen.found = reply.value ? 1 : 0;
  return seen;
}
