import { Injectable } from '@nestjs/common';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { SettingsRepository } from '../settings/settings.repository.js';
import { localDayOf, parseCalendarDate, startOfLocalDay } from '../common/calendar-dates.js';
import { enumerateBuckets } from './calendar.js';
import type { AgentPerformanceView, AgentsReportView } from './agents-report.view.js';
import type { DashboardView } from './dashboard.view.js';
import type { DateRangeQueryDto, MetricsQueryDto } from './dto/metrics-query.dto.js';
import type { MetricsView } from './metrics.view.js';
import { meanRating, meanSeconds, MetricsSeries } from './metrics-series.js';
import { AgentAnalyticsRepository } from './pipelines/agent-analytics.repository.js';
import { ConversationAnalytics } from './pipelines/conversation-analytics.js';
import { FlowExecutionAnalyticsRepository } from './pipelines/flow-execution-analytics.repository.js';
import { MessageAnalyticsRepository } from './pipelines/message-analytics.repository.js';

/** The query DTO has validated the dates; a failure here is a programming error. */
function dayOf(text: string): number {
  const day = parseCalendarDate(text);
  if (typeof day !== 'number') throw new Error(`Unvalidated calendar date: ${text}`);
  return day;
}

/**
 * Figures are computed by the database (one aggregation per collection, run in parallel), in the company's time
 * zone: a range of calendar dates becomes the instants [first local midnight, midnight after the last day).
 */
@Injectable()
export class AnalyticsService {
  constructor(
    private readonly settings: SettingsRepository,
    private readonly conversations: ConversationAnalytics,
    private readonly messages: MessageAnalyticsRepository,
    private readonly flowExecutions: FlowExecutionAnalyticsRepository,
    private readonly agentRecords: AgentAnalyticsRepository,
  ) {}

  async metrics(companyId: CompanyId, query: MetricsQueryDto): Promise<MetricsView> {
    const { timezone: timeZone } = await this.settings.forCompany(companyId);
    const [first, last] = [dayOf(query.startDate), dayOf(query.endDate)];
    const window = {
      start: startOfLocalDay(first, timeZone),
      end: startOfLocalDay(last + 1, timeZone),
      granularity: query.granularity,
      timeZone,
    };
    const rows = await Promise.all([
      this.conversations.buckets(companyId, window),
      this.messages.buckets(companyId, window),
      this.flowExecutions.buckets(companyId, window),
    ]);
    const series = new MetricsSeries(timeZone, enumerateBuckets(first, last, query.granularity));
    for (const pipelineRows of rows) series.add(pipelineRows);
    return {
      startDate: query.startDate,
      endDate: query.endDate,
      granularity: query.granularity,
      timezone: timeZone,
      series: series.series(),
      totals: series.totals(),
    };
  }

  /** Per agent over the range's local days: what it was assigned, closed, sent, how fast, SLA misses and ratings. */
  async agentsReport(companyId: CompanyId, query: DateRangeQueryDto): Promise<AgentsReportView> {
    const { timezone: timeZone } = await this.settings.forCompany(companyId);
    const range = { $gte: startOfLocalDay(dayOf(query.startDate), timeZone), $lt: startOfLocalDay(dayOf(query.endDate) + 1, timeZone) };
    const [agents, conversations, messages] = await Promise.all([
      this.agentRecords.names(companyId),
      this.conversations.byAgent(companyId, range),
      this.messages.sentByAgent(companyId, range),
    ]);
    const totals = new Map<string, Record<string, number>>();
    for (const row of [...conversations, ...messages]) {
      if (!row._id) continue;
      const key = row._id.toHexString();
      const sum = totals.get(key) ?? {};
      for (const [name, value] of Object.entries(row)) if (name !== '_id' && typeof value === 'number') sum[name] = (sum[name] ?? 0) + value;
      totals.set(key, sum);
    }
    const data: AgentPerformanceView[] = [];
    for (const agent of agents) {
      const figures = totals.get(agent._id.toHexString());
      if (!figures && !agent.isActive) continue;
      const count = (name: string) => figures?.[name] ?? 0;
      data.push({
        agentId: agent._id.toHexString(),
        name: agent.name,
        assigned: count('assigned'),
        closed: count('closed'),
        messagesSent: count('messagesSent'),
        avgFirstResponseSeconds: meanSeconds(count('firstResponseMs'), count('firstResponses')),
        avgResolutionSeconds: meanSeconds(count('resolutionMs'), count('closed')),
        slaBreaches: count('slaBreaches'),
        csatAverage: meanRating(count('csatRatingSum'), count('csatResponses')),
      });
    }
    data.sort((a, b) => a.name.localeCompare(b.name) || a.agentId.localeCompare(b.agentId));
    return { startDate: query.startDate, endDate: query.endDate, timezone: timeZone, data };
  }

  async dashboard(companyId: CompanyId): Promise<DashboardView> {
    const { timezone: timeZone } = await this.settings.forCompany(companyId);
    const now = new Date();
    const today = startOfLocalDay(localDayOf(now, timeZone), timeZone);
    const [conversations, messagesToday, agents] = await Promise.all([
      this.conversations.snapshot(companyId, today),
      this.messages.countSince(companyId, today),
      this.agentRecords.countActiveByStatus(companyId),
    ]);
    const open = { bot: 0, queued: 0, human: 0 };
    let oldestQueuedAt: Date | null = null;
    for (const row of conversations.open) {
      open[row._id] = row.count;
      if (row._id === 'queued') oldestQueuedAt = row.oldestQueuedAt;
    }
    const byStatus = { online: 0, away: 0, busy: 0, offline: 0 };
    for (const row of agents) byStatus[row._id] = row.count;
    const firstResponses = conversations.firstResponses[0] ?? { totalMs: 0, count: 0 };
    return {
      conversations: { bot: open.bot, human: open.human, queued: open.queued },
      closedToday: conversations.closedToday[0]?.count ?? 0,
      queue: {
        length: open.queued,
        // A queue entry stamped a moment after `now` was read still counts as waiting 0 s, not a negative time.
        oldestWaitingSeconds: oldestQueuedAt ? Math.max(0, Math.floor((now.getTime() - oldestQueuedAt.getTime()) / 1000)) : 0,
      },
      agents: byStatus,
      messagesToday,
      avgFirstResponseSecondsToday: meanSeconds(firstResponses.totalMs, firstResponses.count),
      generatedAt: now.toISOString(),
    };
  }
}
