import { Injectable, NotFoundException } from '@nestjs/common';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { assertInScope, type ChannelScope } from '../events/event-channel.js';
import { stageEvent } from '../events/pending-event.schema.js';
import { isDelivered, movesForward } from './delivery-status.js';
import type { DeliveryReportDto } from './dto/delivery-report.dto.js';
import type { Message, MessageDelivery } from './message.schema.js';
import { MessageView } from './message.view.js';
import { MessagesRepository } from './messages.repository.js';
import { parseTimestamp } from './timestamp.js';

/**
 * Delivery receipts (contract section 12): a channel connector reports what became of an outbound message. A
 * report that moves its status forward is written with `message.status_changed`, in one write pinned to the
 * status it moved from; any other report (late, repeated) changes nothing and answers the message as it is.
 */
@Injectable()
export class DeliveryReceiptsService {
  constructor(private readonly messages: MessagesRepository) {}

  /**
   * 404 for an inbound, missing, malformed or foreign message id; 403 for a message on a channel outside `scope` (the
   * channels the caller's key is limited to).
   */
  async report(companyId: CompanyId, id: string, report: DeliveryReportDto, scope: ChannelScope = null): Promise<MessageView> {
    // Each lost race means another report moved the status forward, which can happen at most four times.
    for (;;) {
      const current = await this.messages.findById(companyId, id);
      if (!current || current.direction !== 'outbound') throw new NotFoundException(`Message ${id} not found`);
      assertInScope(scope, current.channel, `message ${id}`);
      const previousStatus = current.delivery?.status ?? 'pending';
      if (!movesForward(previousStatus, report.status)) return MessageView.from(current);
      const moved = await this.messages.moveDelivery(companyId, current, nextDelivery(current, report, new Date()), (after) => [
        stageEvent('message.status_changed', { message: MessageView.from(after), previousStatus }, { occurredAt: after.updatedAt, channel: after.channel }),
      ]);
      if (moved) return MessageView.from(moved);
    }
  }
}

/**
 * The delivery after a forward move. Its time is the channel's `occurredAt` if given, kept in order: never before
 * the status it follows (the pending one is the send itself) and never after now (a channel clock a little ahead).
 */
function nextDelivery(current: Stored<Message>, report: DeliveryReportDto, now: Date): MessageDelivery {
  const previous = current.delivery;
  const reported = report.occurredAt === undefined ? now : (parseTimestamp(report.occurredAt) ?? now);
  const since = previous?.updatedAt ?? current.createdAt;
  const updatedAt = new Date(Math.max(Math.min(reported.getTime(), now.getTime()), since.getTime()));
  const externalId = report.externalId ?? previous?.externalId;
  const deliveredAt = previous?.deliveredAt ?? (isDelivered(report.status) ? updatedAt : undefined);
  return {
    status: report.status,
    updatedAt,
    ...(externalId ? { externalId } : {}),
    ...(report.error ? { error: { code: report.error.code, message: report.error.message } } : {}),
    ...(deliveredAt ? { deliveredAt } : {}),
  };
}
