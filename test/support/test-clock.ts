import { Clock } from '../../src/lanes/clock.js';

/** A Clock that a test moves forward, so that deadlines fall due without waiting for them. */
export class TestClock extends Clock {
  private offsetMs = 0;

  override now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  advance(ms: number): void {
    this.offsetMs += ms;
  }
}
