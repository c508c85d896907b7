/**
 * The three targets of an SLA policy (contract section 16): the first agent answer after a conversation opens, the
 * next agent answer after each contact message that follows an answer, and the close.
 */
export const SLA_METRICS = ['first_response', 'next_response', 'resolution'] as const;
export type SlaMetric = (typeof SLA_METRICS)[number];
