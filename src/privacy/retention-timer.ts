/** The kind of the durable timer of a closed conversation's retention (one per conversation, keyed by its id). */
export const RETENTION_TIMER = 'retention';
