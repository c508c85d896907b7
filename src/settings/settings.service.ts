import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { AUTO_ASSIGNMENT } from '../assignment/auto-assignment.name.js';
import { DataMigrations } from '../database/migrations/data-migrations.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { EventConsumers } from '../events/consumers/event-consumers.js';
import { SLA_CONSUMER } from '../service-levels/sla-consumer.name.js';
import { canonicalLanguage } from './dto/settings.validators.js';
import { SettingsView } from './settings.view.js';
import type { UpdateSettingsDto } from './dto/update-settings.dto.js';
import { DEFAULT_REPLY_WINDOW_WARNING_MINUTES, type AutoAssignment } from './settings.schema.js';
import { SettingsRepository } from './settings.repository.js';
import { changesMade, stageAudit, type AuditOrigin } from '../audit/audit-entry.js';
import { withAudit } from '../audit/audited.js';
import { AuditTrail } from '../audit/audit-trail.js';
import { DurableTimers } from '../lanes/durable-timers.js';
import { RETENTION_TIMER } from '../privacy/retention-timer.js';

/**
 * The welcome message every company was created with before welcome messages were sent: nothing read it, so no company
 * chose it. Now that the bot sends it, it is cleared once (a company that wants it sets it again).
 */
const FORMER_DEFAULT_WELCOME = 'Hi! Thanks for reaching out. How can we help?';

@Injectable()
export class SettingsService implements OnApplicationBootstrap {
  constructor(
    private readonly settings: SettingsRepository,
    private readonly consumers: EventConsumers,
    private readonly migrations: DataMigrations,
    private readonly audit: AuditTrail,
    private readonly timers: DurableTimers,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.migrations.runOnce('settings.unchosen-welcome-message', async () => {
      await this.settings.clearWelcomeMessage(FORMER_DEFAULT_WELCOME);
    });
  }

  async get(companyId: CompanyId): Promise<SettingsView> {
    return SettingsView.from(await this.settings.forCompany(companyId));
  }

  /** What auto-assignment and the flow step `assign` read. */
  async autoAssignment(companyId: CompanyId): Promise<AutoAssignment> {
    return (await this.settings.forCompany(companyId)).autoAssignment;
  }

  /** What the reply window warnings read (records made before the setting existed lack it). */
  async replyWindowWarningMinutes(companyId: CompanyId): Promise<number> {
    return (await this.settings.forCompany(companyId)).replyWindowWarningMinutes ?? DEFAULT_REPLY_WINDOW_WARNING_MINUTES;
  }

  /** A deep merge: each given leaf is set on its own dotted path, so siblings not sent stay as they are. */
  async update(companyId: CompanyId, dto: UpdateSettingsDto, origin: AuditOrigin): Promise<SettingsView> {
    const set: Record<string, unknown> = {};
    if (dto.timezone !== undefined) set.timezone = dto.timezone;
    if (dto.welcomeMessage !== undefined) set.welcomeMessage = dto.welcomeMessage;
    if (dto.outOfHoursMessage !== undefined) set.outOfHoursMessage = dto.outOfHoursMessage;
    if (dto.language !== undefined) set.language = canonicalLanguage(dto.language);
    if (dto.replyWindowWarningMinutes !== undefined) set.replyWindowWarningMinutes = dto.replyWindowWarningMinutes;
    if (dto.businessHours?.enabled !== undefined) set['businessHours.enabled'] = dto.businessHours.enabled;
    if (dto.businessHours?.schedule !== undefined) {
      set['businessHours.schedule'] = dto.businessHours.schedule.map(({ day, open, close }) => ({ day, open, close }));
    }
    if (dto.businessHours?.holidays !== undefined) set['businessHours.holidays'] = [...new Set(dto.businessHours.holidays)].sort();
    for (const [key, value] of Object.entries(dto.csat ?? {})) {
      if (value !== undefined) set[`csat.${key}`] = value;
    }
    if (dto.retention?.closedConversationDays !== undefined) set['retention.closedConversationDays'] = dto.retention.closedConversationDays;
    for (const [key, value] of Object.entries(dto.autoAssignment ?? {})) {
      if (value !== undefined) set[`autoAssignment.${key as keyof AutoAssignment}`] = value;
    }
    if (Object.keys(set).length === 0) return this.get(companyId);
    const before = await this.settings.forCompany(companyId);
    const changes = changesMade(flatten(before, Object.keys(set)), set);
    const entry =
      Object.keys(changes).length > 0 ? stageAudit(origin, 'settings.updated', { type: 'settings', id: String(companyId) }, changes) : null;
    const stored = await this.settings.patch(companyId, entry ? withAudit({ $set: set }, entry) : { $set: set });
    if (entry) this.audit.written(companyId, this.settings.collectionName, stored._id, [entry]);
    const updated = SettingsView.from(stored);
    // Turned on, or given more room per agent: the queue may move now rather than at its next event.
    if (dto.autoAssignment?.enabled === true || dto.autoAssignment?.maxConversationsPerAgent !== undefined) {
      await this.consumers.nudge(AUTO_ASSIGNMENT, String(companyId));
    }
    // Every retention timer of the company is due now, and is set again against the new setting (see ConversationRetention).
    if (changes['retention.closedConversationDays']) await this.timers.dueAllNow(companyId, RETENTION_TIMER);
    // The deadlines of SLA policies that count business hours move with them.
    if (dto.timezone !== undefined || dto.businessHours !== undefined) await this.consumers.nudge(SLA_CONSUMER, String(companyId));
    return updated;
  }
}

/** The values of `record` at these dotted paths. */
function flatten(record: object, paths: string[]): Record<string, unknown> {
  return Object.fromEntries(
    paths.map((path) => [path, path.split('.').reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], record)]),
  );
}
