import { Injectable } from '@nestjs/common';

/**
 * The time every deadline is measured against: durable timers' due times, the scheduler's claims, and the rules that
 * set deadlines (a snooze's `until` in the future, an SLA's due time). One provider, so that a test can move time
 * forward for all of them at once instead of waiting.
 */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }
}
