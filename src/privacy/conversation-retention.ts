import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import { Types, type Connection } from 'mongoose';
import type { AnyDomainEvent } from '../events/domain-events.js';
import { ConsumesEvents, type EventHandler } from '../events/consumers/consumes-events.decorator.js';
import { DurableTimers, type FiredTimer } from '../lanes/durable-timers.js';
import { MAX_RETENTION_DAYS } from '../settings/settings.schema.js';
import { ContactErasure } from './contact-erasure.js';
import { RETENTION_TIMER } from './retention-timer.js';

const DAY_MS = 86_400_000;

/**
 * Retention of closed conversations (contract section 23): when a conversation closes, its timer is set for
 * `closedAt` + `retention.closedConversationDays`, or for the longest period there is while the setting is null. A
 * timer computes its due time again when it fires, against the setting as it is then: still early, it sets itself
 * for then; due, the conversation's messages are erased (metadata kept). A change of the setting makes every
 * retention timer of the company due at once (DurableTimers.dueAllNow), so each is set again against the new value:
 * nothing scans the conversations, on a clock or otherwise. A conversation reopened since, or whose contact is under
 * a legal hold, is left as it is; lifting the hold (`contact.updated` with `legalHold` false) sets the timers of the
 * contact's closed conversations again.
 */
@Injectable()
@ConsumesEvents({ name: 'conversation-retention', types: ['conversation.closed', 'contact.updated'] })
export class ConversationRetention implements EventHandler, OnModuleInit {
  constructor(
    @InjectConnection() private readonly connection: Connection,
    private readonly timers: DurableTimers,
    private readonly erasure: ContactErasure,
  ) {}

  onModuleInit(): void {
    this.timers.register(RETENTION_TIMER, (timer) => this.fire(timer));
  }

  async handle(companyId: string, events: AnyDomainEvent[]): Promise<void> {
    if (events.length === 0) return;
    const days = await this.days(companyId);
    for (const event of events) {
      if (event.type === 'contact.updated' && event.data.changes.legalHold?.[1] === false) await this.rearm(companyId, event.data.contact.id, days);
      if (event.type !== 'conversation.closed') continue;
      const { id, closedAt } = event.data.conversation;
      if (!closedAt) continue;
      await this.timers.set(companyId, RETENTION_TIMER, id, dueAt(new Date(closedAt), days));
    }
  }

  /**
   * A lifted hold: the contact's closed conversations get their timers again (a timer that fired while the hold was
   * on is gone), due when their period ends, so one whose period passed meanwhile is erased now. Setting a timer
   * again is idempotent, so a redelivered event changes nothing.
   */
  private async rearm(companyId: string, contactId: string, days: number | null): Promise<void> {
    const closed = this.db()
      .collection('conversations')
      .find(
        { companyId: new Types.ObjectId(companyId), contactId: new Types.ObjectId(contactId), status: 'closed' },
        { projection: { closedAt: 1 } },
      );
    for await (const conversation of closed) {
      if (conversation.closedAt)
        await this.timers.set(companyId, RETENTION_TIMER, String(conversation._id), dueAt(conversation.closedAt as Date, days));
    }
  }

  private async fire(timer: FiredTimer): Promise<void> {
    const companyId = new Types.ObjectId(timer.companyId);
    const conversation = await this.db()
      .collection('conversations')
      .findOne({ _id: new Types.ObjectId(timer.key), companyId }, { projection: { status: 1, closedAt: 1, contactId: 1 } });
    if (!conversation || conversation.status !== 'closed' || !conversation.closedAt) return;
    const due = dueAt(conversation.closedAt as Date, await this.days(timer.companyId));
    if (due > timer.firedAt) return this.timers.set(timer.companyId, RETENTION_TIMER, timer.key, due);
    const contact = await this.db()
      .collection('contacts')
      .findOne({ _id: conversation.contactId, companyId }, { projection: { legalHold: 1 } });
    if (contact?.legalHold === true) return;
    const done = await this.erasure.eraseMessagesOf(companyId, [conversation._id as Types.ObjectId]);
    if (!done) await this.timers.set(timer.companyId, RETENTION_TIMER, timer.key, timer.firedAt);
  }

  private async days(companyId: string): Promise<number | null> {
    const settings = await this.db()
      .collection('settings')
      .findOne({ companyId: new Types.ObjectId(companyId) }, { projection: { retention: 1 } });
    return (settings?.retention as { closedConversationDays?: number | null } | undefined)?.closedConversationDays ?? null;
  }

  private db() {
    const db = this.connection.db;
    if (!db) throw new Error('The database connection is not open');
    return db;
  }
}

/** When a conversation closed at `closedAt` is due for erasure; with no setting, the longest period (looked at again on a change). */
function dueAt(closedAt: Date, days: number | null): Date {
  return new Date(closedAt.getTime() + (days ?? MAX_RETENTION_DAYS) * DAY_MS);
}
