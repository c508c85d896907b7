import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { CompanyId } from '../../database/tenancy/tenant-repository.js';
import { Clock } from '../../lanes/clock.js';
import { DurableTimers, type FiredTimer } from '../../lanes/durable-timers.js';
import { ConversationView } from '../conversation.view.js';
import { ConversationsRepository } from '../conversations.repository.js';
import { ConversationsService } from '../conversations.service.js';
import type { EventOptions } from '../conversation-changes.js';
import { assertSnoozable, assertSnoozeUntil, snoozePlan, wakePlan } from './snooze-changes.js';

/** The durable timer of a snoozed conversation's wake-up: one per conversation, keyed by its id. */
export const SNOOZE_TIMER = 'conversation-snooze';

/**
 * Snoozes and their wake-ups (contract section 15). The wake-up at `until` is a durable timer (src/lanes), which
 * keeps one invariant: while a conversation is snoozed, its timer is due no later than its `snoozedUntil`. A snooze
 * therefore makes the timer due no later than `until` before it writes the conversation (a crash in between leaves a
 * timer that finds nothing to do), and again after (undoing a re-arm by a firing that read the conversation in
 * between). A timer that fires early (the snooze was moved later) sets itself again for the new time; one that fires
 * on time wakes the conversation with a write conditional on its state, so a firing repeated after a crash, or by
 * another process, wakes it once. Waking by the contact's message is ConversationsService.recordMessage's, in the
 * write path of that message; by a close, ConversationsService.close's.
 */
@Injectable()
export class ConversationSnoozes implements OnModuleInit {
  constructor(
    private readonly conversations: ConversationsService,
    private readonly repository: ConversationsRepository,
    private readonly timers: DurableTimers,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.timers.register(SNOOZE_TIMER, (timer) => this.fire(timer));
  }

  /** 400 naming `until` unless it is in the future and within the limit: the snooze route's rule, checked up front by bulk. */
  assertUntil(until: Date): void {
    assertSnoozeUntil(until, this.clock.now());
  }

  /**
   * Snoozes a `human` or `queued` conversation until `until` (status unchanged), with `conversation.snoozed`;
   * snoozed already, moves its wake-up. 400 for another status or an `until` out of bounds, 404 for a foreign id.
   */
  async snooze(companyId: CompanyId, id: string, until: Date, options: EventOptions = {}): Promise<ConversationView> {
    const current = await this.conversations.findStored(companyId, id);
    const now = this.clock.now();
    assertSnoozeUntil(until, now);
    assertSnoozable(current.status);
    const key = current._id.toHexString();
    await this.timers.setNoLaterThan(companyId, SNOOZE_TIMER, key, until);
    const updated = await this.conversations.change(companyId, current, (conversation) => snoozePlan(conversation, until, now), options);
    await this.timers.setNoLaterThan(companyId, SNOOZE_TIMER, key, until);
    return ConversationView.from(updated);
  }

  /** Wakes it now, with `conversation.unsnoozed` (reason `agent`); an awake conversation is answered as it is. */
  async unsnooze(companyId: CompanyId, id: string): Promise<ConversationView> {
    const current = await this.conversations.findStored(companyId, id);
    const updated = await this.conversations.change(companyId, current, (conversation) => wakePlan(conversation, 'agent', this.clock.now()));
    return ConversationView.from(updated);
  }

  /**
   * The timer fired: wakes the conversation if its `snoozedUntil` has come (the sleep ends at `snoozedUntil`), sets
   * the timer again if it was moved later, does nothing if it is awake (woken otherwise, or closed).
   */
  private async fire(timer: FiredTimer): Promise<void> {
    const current = await this.repository.findById(timer.companyId, timer.key);
    if (!current?.snoozedUntil) return;
    const due = (until: Date | null | undefined): until is Date => until != null && until.getTime() <= timer.firedAt.getTime();
    const updated = await this.conversations.change(timer.companyId, current, (conversation) =>
      due(conversation.snoozedUntil) ? wakePlan(conversation, 'timer', conversation.snoozedUntil) : null,
    );
    if (updated.snoozedUntil && !due(updated.snoozedUntil)) {
      await this.timers.set(timer.companyId, SNOOZE_TIMER, timer.key, updated.snoozedUntil);
    }
  }
}
