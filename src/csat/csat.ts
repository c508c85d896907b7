/** Customer satisfaction (contract section 16): what a conversation keeps of the survey sent when it closed. */

/** How long a closed conversation waits for its rating. */
export const CSAT_WINDOW_MS = 7 * 86_400_000;

export interface ConversationCsat {
  /** When the survey was asked for (the close). */
  requestedAt: Date;
  /** The rating is taken until then. */
  expiresAt: Date;
  rating: number | null;
  comment: string | null;
  submittedAt: Date | null;
}
