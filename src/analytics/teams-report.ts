import { Controller, Get, Injectable, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Types } from 'mongoose';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { parseCalendarDate, startOfLocalDay } from '../common/calendar-dates.js';
import { ApiProblemResponses } from '../common/errors/api-error-responses.js';
import { RateLimitWeight } from '../common/rate-limit/rate-limit.guard.js';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { SettingsRepository } from '../settings/settings.repository.js';
import { TeamsRepository } from '../teams/teams.repository.js';
import { METRICS_WEIGHT } from './analytics.controller.js';
import { DateRangeQueryDto } from './dto/metrics-query.dto.js';
import { SLA_OUTCOMES } from './pipelines/conversation-analytics.js';

/** One team's figures over the range. */
export class TeamPerformanceView {
  /** @example 6650f0c2a1b2c3d4e5f60740 */
  teamId: string;
  /** @example Billing */
  name: string;
  /** Conversations that entered its queue in the range (by their last entry) */
  queued: number;
  /** Mean seconds from entering the queue to being assigned, over those assigned in the range; null when none */
  avgWaitSeconds: number | null;
  /** The longest of those waits; null when none */
  maxWaitSeconds: number | null;
  /** Its conversations assigned in the range */
  assigned: number;
  /** Its conversations closed in the range */
  closed: number;
  /** Queue timeouts in its queue in the range (a conversation's last one) */
  queueTimeouts: number;
  /** SLA targets missed among its conversations closed in the range */
  slaBreaches: number;
}

export class TeamsReportView {
  data: TeamPerformanceView[];
}

interface TeamRow {
  _id: Types.ObjectId | null;
  [figure: string]: number | Types.ObjectId | null;
}

/** The query DTO has validated the dates; a failure here is a programming error. */
function dayOf(text: string): number {
  const day = parseCalendarDate(text);
  if (typeof day !== 'number') throw new Error(`Unvalidated calendar date: ${text}`);
  return day;
}

/** The teams report (contract section 19): one aggregation of the conversations on indexed ranges, like the metrics. */
@Injectable()
export class TeamsReport {
  constructor(
    private readonly settings: SettingsRepository,
    private readonly conversations: ConversationsRepository,
    private readonly teams: TeamsRepository,
  ) {}

  async report(companyId: CompanyId, query: DateRangeQueryDto): Promise<TeamsReportView> {
    const { timezone: timeZone } = await this.settings.forCompany(companyId);
    const range = { $gte: startOfLocalDay(dayOf(query.startDate), timeZone), $lt: startOfLocalDay(dayOf(query.endDate) + 1, timeZone) };
    const [teams, rows] = await Promise.all([this.teams.all(companyId), this.figures(companyId, range)]);
    const totals = new Map<string, Record<string, number>>();
    for (const row of rows) {
      if (!row._id) continue;
      const sum = totals.get(row._id.toHexString()) ?? {};
      for (const [name, value] of Object.entries(row)) {
        if (name === '_id' || typeof value !== 'number') continue;
        sum[name] = name === 'maxWaitMs' ? Math.max(sum[name] ?? 0, value) : (sum[name] ?? 0) + value;
      }
      totals.set(row._id.toHexString(), sum);
    }
    return {
      data: teams.map((team) => {
        const figures = totals.get(team._id.toHexString()) ?? {};
        const count = (name: string) => figures[name] ?? 0;
        const waits = count('waits');
        return {
          teamId: team._id.toHexString(),
          name: team.name,
          queued: count('queued'),
          avgWaitSeconds: waits > 0 ? Math.round(count('waitMs') / waits / 100) / 10 : null,
          maxWaitSeconds: waits > 0 ? Math.round(count('maxWaitMs') / 100) / 10 : null,
          assigned: count('assigned'),
          closed: count('closed'),
          queueTimeouts: count('queueTimeouts'),
          slaBreaches: count('slaBreaches'),
        };
      }),
    };
  }

  private async figures(companyId: CompanyId, range: { $gte: Date; $lt: Date }): Promise<TeamRow[]> {
    const waited = { $and: [{ $ne: ['$queuedAt', null] }, { $gte: ['$assignedAt', '$queuedAt'] }] };
    const wait = { $subtract: ['$assignedAt', '$queuedAt'] };
    const [facets] = await this.conversations.aggregate<Record<'queued' | 'assigned' | 'closed' | 'timeouts', TeamRow[]>>(companyId, [
      { $match: { $or: [{ queuedAt: range }, { assignedAt: range }, { closedAt: range }, { 'queueTimeout.at': range }] } },
      {
        $facet: {
          queued: [{ $match: { queuedAt: range, teamId: { $ne: null } } }, { $group: { _id: '$teamId', queued: { $sum: 1 } } }],
          assigned: [
            { $match: { assignedAt: range, teamId: { $ne: null } } },
            {
              $group: {
                _id: '$teamId',
                assigned: { $sum: 1 },
                waits: { $sum: { $cond: [waited, 1, 0] } },
                waitMs: { $sum: { $cond: [waited, wait, 0] } },
                maxWaitMs: { $max: { $cond: [waited, wait, 0] } },
              },
            },
          ],
          closed: [
            { $match: { closedAt: range, teamId: { $ne: null } } },
            { $group: { _id: '$teamId', closed: { $sum: 1 }, slaBreaches: SLA_OUTCOMES.slaBreaches } },
          ],
          timeouts: [{ $match: { 'queueTimeout.at': range } }, { $group: { _id: '$queueTimeout.teamId', queueTimeouts: { $sum: 1 } } }],
        },
      },
    ]);
    return [...facets.queued, ...facets.assigned, ...facets.closed, ...facets.timeouts];
  }
}

@ApiTags('Analytics')
@ApiBearerAuth()
@ApiProblemResponses(401, 429)
@Controller('analytics')
export class TeamsReportController {
  constructor(private readonly teams: TeamsReport) {}

  @Get('teams')
  @RateLimitWeight(METRICS_WEIGHT)
  @ApiOperation({
    summary: 'Figures per team over a date range, in the company time zone',
    description:
      'startDate..endDate as for the metrics (local days, both included, at most 366 days; 400 naming the parameter ' +
      'otherwise). Per team: conversations that entered its queue, the mean and longest wait to assignment, assigned, ' +
      `closed (with SLA breaches) and queue timeouts. Computed by aggregation. Counts ${METRICS_WEIGHT} requests against the rate limits.`,
  })
  @ApiOkResponse({ type: TeamsReportView })
  @ApiProblemResponses(400)
  report(@CurrentAgent() agent: AgentPrincipal, @Query() query: DateRangeQueryDto): Promise<TeamsReportView> {
    return this.teams.report(agent.companyId, query);
  }
}
