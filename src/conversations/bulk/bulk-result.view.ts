import { ConversationView } from '../conversation.view.js';

/** What one id of a bulk action came to: what its single route would have answered. */
export class BulkItemResultView {
  /** @example 6650f0c2a1b2c3d4e5f60718 */
  id: string;
  /** True when `status` is 200 */
  ok: boolean;
  /**
   * The HTTP status the single route would have answered: 200, 400 (a rule refused it, e.g. a closed
   * conversation), 404 (missing, malformed or another company's), 409 (changed concurrently)
   * @example 200
   */
  status: number;
  /** The conversation after the action (on success) */
  conversation?: ConversationView;
  /**
   * Why it failed, in the single route's words (its problem details' `detail`)
   * @example Cannot move a conversation from closed to human; allowed from closed: none (closed conversations are never reopened)
   */
  error?: string;
}

export class BulkResultView {
  /** One per id, in the order of `ids` */
  results: BulkItemResultView[];
}
