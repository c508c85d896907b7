/** Whether the company is open right now (contract section 16). */
export class BusinessHoursStatusView {
  /** false: business hours are off, and the company counts as always open */
  enabled: boolean;
  /** Open at `at`, by the schedule and holidays of the settings */
  open: boolean;
  /**
   * When `open` next changes (the next close when open, the next opening when closed); null when business hours are
   * off, or when nothing in the schedule opens again
   * @example 2026-01-12T08:00:00.000Z
   */
  nextChangeAt: string | null;
  /**
   * The time zone the schedule is read in (settings)
   * @example Europe/Paris
   */
  timezone: string;
  /** The instant this answer is for */
  at: string;
}
