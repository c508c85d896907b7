import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { ApiProblemResponses } from '../common/errors/api-error-responses.js';
import { RateLimitWeight } from '../common/rate-limit/rate-limit.guard.js';
import { AgentsReportView } from './agents-report.view.js';
import { AnalyticsService } from './analytics.service.js';
import { DashboardView } from './dashboard.view.js';
import { DateRangeQueryDto, MetricsQueryDto } from './dto/metrics-query.dto.js';
import { MetricsView } from './metrics.view.js';

/** A metrics request runs aggregation pipelines over up to 366 days (~1 s over 100 000 messages). */
export const METRICS_WEIGHT = 10;

/** Every agent of the company may read analytics (contract: agents read everything of their company). */
@ApiTags('Analytics')
@ApiBearerAuth()
@ApiProblemResponses(401, 429)
@Controller('analytics')
export class AnalyticsController {
  constructor(private readonly analytics: AnalyticsService) {}

  @Get('metrics')
  @RateLimitWeight(METRICS_WEIGHT)
  @ApiOperation({
    summary: 'Aggregated metrics per day, ISO week or month of a date range, in the company time zone',
    description:
      'The range is startDate..endDate inclusive, as calendar dates in the time zone of the settings: from local ' +
      'midnight of startDate to local midnight after endDate, so days of 23 or 25 hours (DST) are whole days. ' +
      'Every bucket from the one holding startDate to the one holding endDate is listed, empty ones included; ' +
      '`period` is its local first day (weeks start on Monday), and a first or last week or month that reaches ' +
      'outside the range counts only what falls inside it. Conversations count as created where createdAt falls ' +
      'and as closed where closedAt falls, even when created before the range; delivered, read and failed messages ' +
      'where that status was reached (the delivery receipt’s time), whenever they were sent. SLA outcomes count ' +
      'conversations closed in the bucket under an SLA policy (slaMet: none of its targets missed; slaBreaches: at ' +
      'least one), ratings where they were given. 400 names the ' +
      'parameter at fault: missing, not YYYY-MM-DD, not a real date (2025-02-30), endDate before startDate, or a ' +
      `range over 366 days. Counts ${METRICS_WEIGHT} requests against the rate limits.`,
  })
  @ApiOkResponse({ type: MetricsView, description: 'The series, one item per bucket in order, and the totals of the range' })
  @ApiProblemResponses(400)
  metrics(@CurrentAgent() agent: AgentPrincipal, @Query() query: MetricsQueryDto): Promise<MetricsView> {
    return this.analytics.metrics(agent.companyId, query);
  }

  @Get('agents')
  @RateLimitWeight(METRICS_WEIGHT)
  @ApiOperation({
    summary: 'Figures per agent over a date range, in the company time zone',
    description:
      'startDate..endDate as for the metrics (local days, both included, at most 366 days; 400 naming the parameter ' +
      'otherwise). Per agent: conversations assigned to it (by the time of their last assignment), closed while it ' +
      'held them (with the mean resolution time and the SLA breaches among them), first answered (mean first-response ' +
      'time) and rated (mean rating) while assigned to it, and the messages it sent. Every active agent is listed, ' +
      `deactivated ones when they have figures. Computed by aggregation on indexed ranges. Counts ${METRICS_WEIGHT} requests against the rate limits.`,
  })
  @ApiOkResponse({ type: AgentsReportView })
  @ApiProblemResponses(400)
  agents(@CurrentAgent() agent: AgentPrincipal, @Query() query: DateRangeQueryDto): Promise<AgentsReportView> {
    return this.analytics.agentsReport(agent.companyId, query);
  }

  @Get('dashboard')
  @ApiOperation({
    summary: 'Live figures: open conversations, the queue, agents, and today so far',
    description: '"Today" starts at the latest local midnight in the company time zone (settings).',
  })
  @ApiOkResponse({ type: DashboardView, description: 'Figures as of generatedAt' })
  dashboard(@CurrentAgent() agent: AgentPrincipal): Promise<DashboardView> {
    return this.analytics.dashboard(agent.companyId);
  }
}
