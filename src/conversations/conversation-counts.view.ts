/** The counts an inbox shows beside its tabs, over open conversations (closed ones are never counted). */
export class ConversationCountsView {
  /**
   * Open conversations the bot is handling
   * @example 12
   */
  bot: number;
  /**
   * Conversations waiting in the queue for an agent
   * @example 4
   */
  queued: number;
  /**
   * Conversations an agent is handling
   * @example 31
   */
  human: number;
  /**
   * Open conversations without an assigned agent (bot and queued ones)
   * @example 16
   */
  unassigned: number;
  /**
   * Open conversations snoozed until later
   * @example 3
   */
  snoozed: number;
  /**
   * `human` conversations assigned to you
   * @example 7
   */
  mine: number;
  /**
   * Of those, the ones with inbound messages you have not read
   * @example 2
   */
  mineUnread: number;
}
