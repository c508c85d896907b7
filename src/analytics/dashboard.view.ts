export class DashboardConversationsView {
  /** @example 14 */
  bot: number;
  /** @example 23 */
  human: number;
  /** @example 5 */
  queued: number;
}

export class DashboardQueueView {
  /**
   * Conversations waiting in the queue
   * @example 5
   */
  length: number;

  /**
   * Whole seconds the longest-waiting one has been queued (since it last entered the queue); 0 when empty
   * @example 312
   */
  oldestWaitingSeconds: number;
}

export class DashboardAgentsView {
  /** @example 6 */
  online: number;
  /** @example 1 */
  away: number;
  /** @example 2 */
  busy: number;
  /** @example 4 */
  offline: number;
}

export class DashboardMessagesView {
  /**
   * Inbound messages received today
   * @example 182
   */
  received: number;
  /**
   * Outbound messages sent today
   * @example 240
   */
  sent: number;
  /**
   * Outbound messages that failed today (by the failure report's time), whenever they were sent
   * @example 3
   */
  failed: number;
}

export class DashboardView {
  /** Open conversations by status, right now */
  conversations: DashboardConversationsView;

  /**
   * Conversations closed today
   * @example 31
   */
  closedToday: number;

  queue: DashboardQueueView;

  /** Active agents by status; deactivated agents are left out */
  agents: DashboardAgentsView;

  /** Messages today: inbound, outbound, and failed deliveries */
  messagesToday: DashboardMessagesView;

  /**
   * Mean seconds from creation to first response of the conversations first answered today; null when none.
   * Millisecond precision
   * @example 48.2
   */
  avgFirstResponseSecondsToday: number | null;

  /** When these figures were computed */
  generatedAt: string;
}
