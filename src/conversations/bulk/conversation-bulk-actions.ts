import { Injectable, Logger } from '@nestjs/common';
import type { AgentPrincipal } from '../../auth/auth-principal.js';
import { normalizeException } from '../../common/errors/normalize-exception.js';
import { RequestValidationException, type FieldProblem } from '../../common/errors/request-validation.exception.js';
import { parseTimestamp } from '../../messages/timestamp.js';
import type { ConversationView } from '../conversation.view.js';
import { ConversationsService } from '../conversations.service.js';
import { BULK_ACTION_FIELDS, BULK_FIELDS, type BulkConversationsDto } from '../dto/bulk-conversations.dto.js';
import { ConversationSnoozes } from '../snooze/conversation-snoozes.js';
import type { BulkItemResultView, BulkResultView } from './bulk-result.view.js';

/** One action on one conversation, through the same service method as its single route. */
type Apply = (id: string) => Promise<ConversationView>;

/**
 * `POST /v1/conversations/bulk`: one action on up to 100 conversations, each through the single route's service
 * method (rules, events, errors), one after another in the order given. The action's fields are checked once, up
 * front (a 400 for the whole request); everything that depends on the conversation is answered per id.
 */
@Injectable()
export class ConversationBulkActions {
  private readonly logger = new Logger(ConversationBulkActions.name);

  constructor(
    private readonly conversations: ConversationsService,
    private readonly snoozes: ConversationSnoozes,
  ) {}

  async apply(agent: AgentPrincipal, dto: BulkConversationsDto): Promise<BulkResultView> {
    const apply = this.actionOf(agent, dto);
    const results: BulkItemResultView[] = [];
    for (const id of dto.ids) {
      try {
        results.push({ id, ok: true, status: 200, conversation: await apply(id) });
      } catch (error) {
        results.push({ id, ...this.failure(error) });
      }
    }
    return { results };
  }

  /** The action, once its fields are checked: 400 naming each field missing, out of place or out of bounds. */
  private actionOf(agent: AgentPrincipal, dto: BulkConversationsDto): Apply {
    const { required, optional } = BULK_ACTION_FIELDS[dto.action];
    const allowed: readonly string[] = [...required, ...optional];
    const problems: FieldProblem[] = [];
    for (const field of BULK_FIELDS) {
      const given = dto[field] !== undefined;
      if (!given && (required as readonly string[]).includes(field)) problems.push({ field, message: `${field} is required for action ${dto.action}` });
      if (given && !allowed.includes(field)) problems.push({ field, message: `${field} does not apply to action ${dto.action}` });
    }
    if (dto.action === 'add_tags' && dto.tags?.length === 0) problems.push({ field: 'tags', message: 'tags must list at least one tag' });
    if (problems.length > 0) throw new RequestValidationException(problems);
    const { companyId } = agent;
    switch (dto.action) {
      case 'assign':
        return (id) => this.conversations.assign(companyId, id, dto.agentId!, { kind: 'agent', id: agent.agentId });
      case 'close':
        return (id) => this.conversations.close(companyId, id, dto.reason);
      case 'set_priority':
        return (id) => this.conversations.setPriority(companyId, id, dto.priority!);
      case 'add_tags':
        return (id) => this.conversations.addTags(companyId, id, dto.tags!);
      case 'snooze': {
        const until = parseTimestamp(dto.until!)!;
        this.snoozes.assertUntil(until);
        return (id) => this.snoozes.snooze(companyId, id, until);
      }
    }
  }

  /** What the single route would have answered for this error: its status, and its problem details' `detail`. */
  private failure(error: unknown): Pick<BulkItemResultView, 'ok' | 'status' | 'error'> {
    const normalized = normalizeException(error);
    if (normalized.internal) this.logger.error({ err: error }, 'A bulk action failed on one conversation');
    const detail = Array.isArray(normalized.message) ? normalized.message.join('; ') : normalized.message;
    return { ok: false, status: normalized.status, error: detail };
  }
}
