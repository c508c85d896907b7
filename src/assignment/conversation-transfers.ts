import { ForbiddenException, Injectable } from '@nestjs/common';
import { AgentsRepository } from '../agents/agents.repository.js';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { roleAllows } from '../auth/guards/permissions.guard.js';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import { queuedEvent, queueEntry, transferredEvent, type EventOptions } from '../conversations/conversation-changes.js';
import { assertAssignable, assertTransition } from '../conversations/conversation-transitions.js';
import type { Conversation } from '../conversations/conversation.schema.js';
import { ConversationView } from '../conversations/conversation.view.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { ReadMarkersRepository } from '../conversations/read-markers.repository.js';
import { toObjectId } from '../database/object-id.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { stageEvent } from '../events/pending-event.schema.js';
import { Clock } from '../lanes/clock.js';
import { PrivateNotes } from '../messages/private-notes.js';

/** Who moves a conversation: an agent through the API, or a flow step or rule (no person). */
export type TransferActor = { kind: 'agent'; principal: AgentPrincipal } | { kind: 'flow' | 'rule'; id: string | null };

/**
 * Moving a conversation to a team's queue or to an agent (contract section 19): the transfer route, the flow step
 * `assign_team` and the rule action of that name all call `toTeam` / `toAgent`. Each move is one write of the
 * conversation with `conversation.transferred` (and `conversation.queued` or `conversation.assigned` for the status
 * it enters), so routing, loads and webhooks learn it from the log.
 */
/** The 403 of an agent transferring another agent's conversation. */
export const TRANSFER_NEEDS_ASSIGNEE = 'Agents may transfer only conversations assigned to them or unassigned';

@Injectable()
export class ConversationTransfers {
  constructor(
    private readonly conversations: ConversationsService,
    private readonly agents: AgentsRepository,
    private readonly readMarkers: ReadMarkersRepository,
    private readonly notes: PrivateNotes,
    private readonly clock: Clock,
  ) {}

  /** The transfer route: exactly one target; the assigned agent, anyone for an unassigned one, or a supervisor. */
  async transfer(principal: AgentPrincipal, id: string, target: { teamId?: string; agentId?: string }, note?: string): Promise<ConversationView> {
    const { companyId } = principal;
    const current = await this.conversations.findStored(companyId, id);
    const assignee = current.assignedAgentId?.toHexString() ?? null;
    if (!roleAllows(principal.role, 'supervisor') && assignee !== null && assignee !== principal.agentId) {
      throw new ForbiddenException(TRANSFER_NEEDS_ASSIGNEE);
    }
    const actor: TransferActor = { kind: 'agent', principal };
    const moved =
      target.teamId !== undefined
        ? await this.toTeam(companyId, id, target.teamId, actor)
        : await this.toAgent(companyId, id, target.agentId!, actor);
    if (note !== undefined) await this.notes.add(principal, id, { text: note, mentions: [] });
    return moved;
  }

  /** To the team's queue: `queued`, unassigned, waiting from now. 400 naming `teamId` for a team not of the company. */
  async toTeam(companyId: CompanyId, id: string, teamId: string, _actor: TransferActor, options: EventOptions = {}): Promise<ConversationView> {
    const team = await this.conversations.teamOrThrow(companyId, teamId);
    const updated = await this.conversations.change(
      companyId,
      await this.conversations.findStored(companyId, id),
      (conversation) => {
        if (conversation.status !== 'queued') assertTransition(conversation.status, 'queued');
        if (conversation.status === 'queued' && String(conversation.teamId) === String(team)) return null;
        return {
          expected: { status: conversation.status, assignedAgentId: conversation.assignedAgentId, teamId: conversation.teamId },
          set: { ...queueEntry(), teamId: team },
          events: (after: Stored<Conversation>) => [
            transferredEvent(after, conversation, options),
            ...(conversation.status === 'queued' ? [] : [queuedEvent(after, conversation)]),
          ],
        };
      },
      options,
    );
    return ConversationView.from(updated);
  }

  /** To the agent: `human`, assigned to it (a person decided: capacity does not limit it). */
  async toAgent(companyId: CompanyId, id: string, agentId: string, actor: TransferActor, options: EventOptions = {}): Promise<ConversationView> {
    const current = await this.conversations.findStored(companyId, id);
    assertAssignable(current.status);
    const agent = await this.agents.findById(companyId, agentId);
    if (!agent) throw new RequestValidationException([{ field: 'agentId', message: 'agent not found' }]);
    if (!agent.isActive)
      throw new RequestValidationException([{ field: 'agentId', message: 'agent is deactivated and cannot be assigned conversations' }]);
    const marker = await this.readMarkers.markerOf(companyId, agent._id, current._id);
    const by =
      actor.kind === 'agent'
        ? { kind: 'agent' as const, id: toObjectId(actor.principal.agentId) }
        : { kind: 'flow' as const, id: actor.id ? toObjectId(actor.id) : null };
    const updated = await this.conversations.change(companyId, current, (conversation) => {
      assertAssignable(conversation.status);
      if (conversation.status === 'human' && conversation.assignedAgentId?.equals(agent._id)) return null;
      const previousAgentId = conversation.assignedAgentId?.toHexString() ?? null;
      return {
        expected: { status: conversation.status, assignedAgentId: conversation.assignedAgentId },
        set: {
          status: 'human',
          assignedAgentId: agent._id,
          assignedAt: new Date(),
          assignedBy: by,
          assigneeUnread: (conversation.inboundCount ?? 0) > (marker?.readCount ?? 0),
        },
        events: (after: Stored<Conversation>) => [
          transferredEvent(after, conversation, options),
          stageEvent(
            'conversation.assigned',
            { conversation: ConversationView.from(after), agentId: agent._id.toHexString(), previousAgentId },
            { occurredAt: after.updatedAt },
          ),
        ],
      };
    });
    await this.agents.hold(companyId, agent._id, updated._id, updated.channel, this.clock.now());
    return ConversationView.from(updated);
  }
}
