import { ApiProperty } from '@nestjs/swagger';

/** One agent's figures over the range. */
export class AgentPerformanceView {
  /** @example 6650f0c2a1b2c3d4e5f60701 */
  agentId: string;
  /** @example Ada Lovelace */
  name: string;
  /**
   * Conversations assigned to it in the range (by their last assignment's time)
   * @example 40
   */
  assigned: number;
  /**
   * Conversations it held when they were closed in the range
   * @example 36
   */
  closed: number;
  /**
   * Messages it sent to contacts in the range (notes aside)
   * @example 212
   */
  messagesSent: number;
  /**
   * Mean seconds from opening to the first agent answer, over its conversations first answered in the range; null
   * when there is none
   * @example 95.2
   */
  avgFirstResponseSeconds: number | null;
  /**
   * Mean seconds from opening to close, over the conversations it closed in the range; null when there is none
   * @example 5400.5
   */
  avgResolutionSeconds: number | null;
  /**
   * Of the conversations it closed in the range, those that missed an SLA target
   * @example 2
   */
  slaBreaches: number;
  /**
   * Mean satisfaction rating (1 to 5, two decimals) of its conversations rated in the range; null when none was
   * @example 4.6
   */
  csatAverage: number | null;
}

export class AgentsReportView {
  /** @example 2025-03-01 */
  @ApiProperty({ format: 'date' }) startDate: string;
  /** @example 2025-03-31 */
  @ApiProperty({ format: 'date' }) endDate: string;
  /**
   * The company time zone (settings) the days are counted in
   * @example Europe/Paris
   */
  timezone: string;
  /** Every active agent, and deactivated ones with figures in the range, by name */
  data: AgentPerformanceView[];
}
