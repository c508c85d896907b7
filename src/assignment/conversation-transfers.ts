import { ForbiddenException, Injectable } from '@nestjs/common';
import type { Types } from 'mongoose';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { roleAllows } from '../auth/guards/permissions.guard.js';
import { queuedEvent, queueEntry, transferredEvent, type EventOptions } from '../conversations/conversation-changes.js';
import { assertTransition } from '../conversations/conversation-transitions.js';
import type { Conversation } from '../conversations/conversation.schema.js';
import { ConversationView } from '../conversations/conversation.view.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { PrivateNotes } from '../messages/private-notes.js';
import { TeamsRepository } from '../teams/teams.repository.js';

/** Who moves a conversation: an agent through the API, or a flow step or rule (no person). */
export type TransferActor = { kind: 'agent'; principal: AgentPrincipal } | { kind: 'flow' | 'rule'; id: string | null };

/** The 403 of an agent transferring another agent's conversation. */
export const TRANSFER_NEEDS_ASSIGNEE = 'Agents may transfer only conversations assigned to them or unassigned';

/**
 * Moving a conversation to a team's queue or to an agent (contract section 19): the transfer route, the flow step
 * `assign_team` and the rule action of that name all call `toTeam`. Each move is one write of the conversation with
 * `conversation.transferred` (and `conversation.queued` or `conversation.assigned` for the status it enters), so
 * routing, loads and webhooks learn it from the log.
 */
@Injectable()
export class ConversationTransfers {
  constructor(
    private readonly conversations: ConversationsService,
    private readonly notes: PrivateNotes,
    private readonly teams: TeamsRepository,
  ) {}

  /**
   * The transfer route: exactly one target; the assigned agent, anyone for an unassigned one, or a supervisor. To an
   * agent it is an assignment by that person (capacity does not limit it), with `conversation.transferred`.
   */
  async transfer(principal: AgentPrincipal, id: string, target: { teamId?: string; agentId?: string }, note?: string): Promise<ConversationView> {
    const { companyId } = principal;
    const current = await this.conversations.findStored(companyId, id);
    const assignee = current.assignedAgentId?.toHexString() ?? null;
    if (!roleAllows(principal.role, 'supervisor') && assignee !== null && assignee !== principal.agentId) {
      throw new ForbiddenException(TRANSFER_NEEDS_ASSIGNEE);
    }
    const moved =
      target.teamId !== undefined
        ? await this.moveToTeam(companyId, current, await this.teams.referencedId(companyId, target.teamId))
        : await this.conversations.assign(companyId, current, target.agentId!, { kind: 'agent', id: principal.agentId }, { transfer: true });
    if (note !== undefined) await this.notes.add(principal, id, { text: note, mentions: [] });
    return moved;
  }

  /** To the team's queue: `queued`, unassigned, waiting from now. 400 naming `teamId` for a team not of the company. */
  async toTeam(companyId: CompanyId, id: string, teamId: string, _actor: TransferActor, options: EventOptions = {}): Promise<ConversationView> {
    const team = await this.teams.referencedId(companyId, teamId);
    return this.moveToTeam(companyId, await this.conversations.findStored(companyId, id), team, options);
  }

  private async moveToTeam(
    companyId: CompanyId,
    current: Stored<Conversation>,
    team: Types.ObjectId | null,
    options: EventOptions = {},
  ): Promise<ConversationView> {
    const updated = await this.conversations.change(
      companyId,
      current,
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
}
