import { describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { clocksFor, pendingStages, sameClocks, stageAt, type ConversationSla, type SlaTargets } from './sla-state.js';

const at = (iso: string) => new Date(iso);
const targets: SlaTargets = { firstResponseSeconds: 600, nextResponseSeconds: 300, resolutionSeconds: 3600, warnBeforeSeconds: 60, businessHoursOnly: false };
const everySecond = { calendar: null, sleeps: [] };
const opened = at('2031-01-06T10:00:00Z');

describe('SLA clocks', () => {
  it('run from their starts to their targets, only the unmet ones', () => {
    const open = clocksFor(targets, { createdAt: opened, isOpen: true, firstResponseAt: null }, null, {}, everySecond);
    expect(Object.keys(open).sort()).toEqual(['first_response', 'resolution']);
    expect(open.first_response).toEqual({ startedAt: opened, dueAt: at('2031-01-06T10:10:00Z'), warned: false, breached: false });
    const answered = clocksFor(targets, { createdAt: opened, isOpen: true, firstResponseAt: at('2031-01-06T10:05:00Z') }, at('2031-01-06T10:20:00Z'), open, everySecond);
    expect(Object.keys(answered).sort()).toEqual(['next_response', 'resolution']);
    expect(answered.next_response?.dueAt).toEqual(at('2031-01-06T10:25:00Z'));
    expect(clocksFor(targets, { createdAt: opened, isOpen: false, firstResponseAt: null }, null, open, everySecond)).toEqual({});
  });

  it('keep what fired for the same start (once per cycle); a new start fires anew', () => {
    const waiting = at('2031-01-06T10:20:00Z');
    const fired = { startedAt: waiting, dueAt: at('2031-01-06T10:25:00Z'), warned: true, breached: true };
    const facts = { createdAt: opened, isOpen: true, firstResponseAt: opened };
    expect(clocksFor(targets, facts, waiting, { next_response: fired }, everySecond).next_response).toMatchObject({ warned: true, breached: true });
    expect(clocksFor(targets, facts, at('2031-01-06T11:00:00Z'), { next_response: fired }, everySecond).next_response).toMatchObject({ warned: false, breached: false });
  });

  it('have a warning warnBeforeSeconds (wall clock) before the breach, each until fired', () => {
    const clock = { startedAt: opened, dueAt: at('2031-01-06T10:10:00Z'), warned: false, breached: false };
    expect(stageAt(targets, clock, 'warning')).toEqual(at('2031-01-06T10:09:00Z'));
    expect(stageAt(targets, clock, 'breach')).toEqual(at('2031-01-06T10:10:00Z'));
    expect(stageAt(targets, { ...clock, warned: true }, 'warning')).toBeNull();
    expect(stageAt(targets, { ...clock, breached: true }, 'warning')).toBeNull();
    expect(stageAt({ ...targets, warnBeforeSeconds: null }, clock, 'warning')).toBeNull();
    expect(stageAt(targets, { ...clock, dueAt: null }, 'breach')).toBeNull();
  });

  it('name the timers a conversation should have', () => {
    const sla: ConversationSla = {
      policyId: new Types.ObjectId(),
      targets,
      businessHoursOnly: false,
      answeredAt: null,
      closedAt: null,
      waitingSince: null,
      clocks: {
        first_response: { startedAt: opened, dueAt: at('2031-01-06T10:10:00Z'), warned: true, breached: false },
        resolution: { startedAt: opened, dueAt: at('2031-01-06T11:00:00Z'), warned: false, breached: false },
      },
      breaches: [],
      sequence: 7,
      version: 3,
    };
    expect(Object.fromEntries(pendingStages(sla))).toEqual({
      'first_response:breach': at('2031-01-06T10:10:00Z'),
      'resolution:warning': at('2031-01-06T10:59:00Z'),
      'resolution:breach': at('2031-01-06T11:00:00Z'),
    });
    expect(pendingStages(null).size).toBe(0);
    expect(sameClocks(sla, { ...sla, sequence: 9, version: 4 })).toBe(true);
    expect(sameClocks(sla, { ...sla, breaches: ['first_response'] })).toBe(false);
    expect(sameClocks(sla, null)).toBe(false);
    expect(sameClocks(null, null)).toBe(true);
  });
});
