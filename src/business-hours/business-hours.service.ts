import { Injectable } from '@nestjs/common';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { Clock } from '../lanes/clock.js';
import type { Settings } from '../settings/settings.schema.js';
import { SettingsRepository } from '../settings/settings.repository.js';
import { BusinessCalendar } from './business-calendar.js';
import type { BusinessHoursStatusView } from './business-hours-status.view.js';

/**
 * The company's business hours as a BusinessCalendar, from its settings (served from the settings cache, so a change
 * applies here as it does there). One calendar per settings record read, so its parsing is not repeated per call.
 */
@Injectable()
export class BusinessHoursService {
  private readonly calendars = new WeakMap<Stored<Settings>, BusinessCalendar>();

  constructor(
    private readonly settings: SettingsRepository,
    private readonly clock: Clock,
  ) {}

  async calendar(companyId: CompanyId): Promise<BusinessCalendar> {
    const settings = await this.settings.forCompany(companyId);
    let calendar = this.calendars.get(settings);
    if (!calendar) {
      const { enabled, schedule, holidays } = settings.businessHours;
      calendar = new BusinessCalendar(settings.timezone, { enabled, schedule, holidays: holidays ?? [] });
      this.calendars.set(settings, calendar);
    }
    return calendar;
  }

  /** Open now, and when that changes (null: disabled, or it never opens again). */
  async status(companyId: CompanyId): Promise<BusinessHoursStatusView> {
    const calendar = await this.calendar(companyId);
    const now = this.clock.now();
    return {
      enabled: calendar.enabled,
      open: calendar.isOpen(now),
      nextChangeAt: calendar.nextChange(now)?.toISOString() ?? null,
      timezone: calendar.timeZone,
      at: now.toISOString(),
    };
  }
}
