import type { ConversationCsat } from './csat.js';

/** The contact's rating of a closed conversation. */
export class ConversationCsatView {
  /**
   * 1 (bad) to 5 (very good)
   * @example 5
   */
  rating: number;
  /** @example "Quick and kind, thanks!" */
  comment: string | null;
  submittedAt: string;

  static from(csat: ConversationCsat | null | undefined): ConversationCsatView | null {
    if (!csat?.submittedAt || csat.rating === null) return null;
    return { rating: csat.rating, comment: csat.comment, submittedAt: csat.submittedAt.toISOString() };
  }
}
