import { BadRequestException, ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import type { Conversation } from '../conversations/conversation.schema.js';
import { ConversationView } from '../conversations/conversation.view.js';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { assertInScope, type ChannelScope } from '../events/event-channel.js';
import { stageEvent } from '../events/pending-event.schema.js';
import { Clock } from '../lanes/clock.js';
import type { SubmitCsatDto } from './dto/submit-csat.dto.js';

const ATTEMPTS = 5;

/**
 * Ratings of closed conversations (contract section 16): taken once, while the conversation awaits one (the survey
 * was asked for on close, up to seven days before), with `csat.submitted` in the same write.
 */
@Injectable()
export class CsatService {
  constructor(
    private readonly conversations: ConversationsRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * 404: missing, malformed or foreign id; 403: a conversation on a channel outside `scope` (the channels the caller's
   * key is limited to); 409: rated already; 400: not awaiting a rating.
   */
  async submit(companyId: CompanyId, id: string, dto: SubmitCsatDto, scope: ChannelScope = null): Promise<ConversationView> {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
      const current = await this.conversations.findById(companyId, id);
      if (!current) throw new NotFoundException(`Conversation ${id} not found`);
      assertInScope(scope, current.channel, `conversation ${id}`);
      this.assertAwaiting(current);
      const submittedAt = this.clock.now();
      const csat = { ...current.csat!, rating: dto.rating, comment: dto.comment ?? null, submittedAt };
      const updated = await this.conversations.change(companyId, current, { 'csat.submittedAt': null }, { csat }, (after) => [
        stageEvent('csat.submitted', { conversation: ConversationView.from(after), rating: dto.rating, comment: csat.comment }, { occurredAt: after.updatedAt }),
      ]);
      if (updated) return ConversationView.from(updated);
    }
    throw new ConflictException(`Conversation ${id} kept changing while the rating was stored; send it again`);
  }

  private assertAwaiting(conversation: Stored<Conversation>): void {
    const id = conversation._id.toHexString();
    const csat = conversation.csat;
    if (csat?.submittedAt) throw new ConflictException(`Conversation ${id} was rated already, at ${csat.submittedAt.toISOString()}`);
    if (!csat) throw new BadRequestException(`Conversation ${id} is not awaiting a rating: no survey was sent for it (it is sent when a conversation closes with CSAT enabled)`);
    if (csat.expiresAt.getTime() < this.clock.now().getTime()) {
      throw new BadRequestException(`Conversation ${id} is not awaiting a rating any more: its survey expired at ${csat.expiresAt.toISOString()}`);
    }
  }
}
