import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { ApiReplyWindowClosedResponse } from '../channels/reply-window.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { ApiPageResponse, type Page } from '../common/pagination/page.js';
import { AgentConversationView, ReadStateView } from '../inbox/agent-conversation.view.js';
import { MarkReadDto } from '../inbox/dto/mark-read.dto.js';
import { InboxService } from '../inbox/inbox.service.js';
import { MessagesService } from '../messages/messages.service.js';
import { ConversationCountsView } from './conversation-counts.view.js';
import { ConversationsService } from './conversations.service.js';
import { AssignConversationDto } from './dto/assign-conversation.dto.js';
import { CloseConversationDto } from './dto/close-conversation.dto.js';
import { CreateConversationDto } from './dto/create-conversation.dto.js';
import { ListConversationsQueryDto } from './dto/list-conversations-query.dto.js';
import { UpdateConversationDto } from './dto/update-conversation.dto.js';

const LIFE_CYCLE =
  'Life cycle: bot → queued (hand-off), bot|queued → human (assign), human → queued (unassign), ' +
  'bot|queued|human → closed. A closed conversation is never reopened. Any other move answers 400 naming the ' +
  'allowed ones; a concurrent change to the same conversation answers 409 (read it again and retry).';

/** Said of every answer with a conversation. */
const AS_YOU_SEE_IT =
  'Each conversation shows its `lastMessage` (a preview of its newest message) and, for you, `unreadCount` (inbound ' +
  'messages after your read marker) and `lastReadAt`. Webhooks and events carry the conversation without the last two.';

const WALK =
  'Pages continue after `startAfter` (the previous `nextCursor`, made in the same `sort`; another sort answers 400) ' +
  'and never repeat a conversation whose sort key did not change meanwhile. In `lastActivity` order, a conversation ' +
  'that receives a message during your walk moves to the top: the rest of the walk does not show it (again, or at ' +
  'all if you had not reached it), and a fresh first page shows it first. In `waiting` order, one that re-enters the ' +
  'queue moves to the end, where the walk shows it again. In `created` order nothing moves. A conversation whose ' +
  'status or other filtered field changes may leave or enter the filter between two pages.';

/** The conversation routes; their messages are MessagesController's. Registered by ConversationsApiModule. */
@ApiTags('Conversations')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@Controller('conversations')
export class ConversationsController {
  constructor(
    private readonly conversations: ConversationsService,
    private readonly messages: MessagesService,
    private readonly inbox: InboxService,
  ) {}

  @Post()
  @ApiOperation({
    summary: 'Start a conversation with a contact (status bot, priority medium unless given)',
    description:
      'With `message`, that text becomes the first outbound message, sent by you (`message.sent`). ' +
      'A contact has at most one open conversation per channel: a second one answers 409. A new conversation has no ' +
      'open reply window, so on a channel with one, `message` answers 409 `reply-window-closed` and nothing is ' +
      'stored: start it with a template instead (`POST /v1/messages`).',
  })
  @ApiCreatedResponse({ type: AgentConversationView })
  @ApiReplyWindowClosedResponse('the contact already has an open conversation on the channel (about:blank)')
  async start(@CurrentAgent() agent: AgentPrincipal, @Body() dto: CreateConversationDto): Promise<AgentConversationView> {
    return this.inbox.present(agent, await this.messages.startConversation(agent, dto));
  }

  @Get()
  @ApiOperation({
    summary: 'List conversations (newest created first by default); pass `nextCursor` back as `startAfter`',
    description:
      'What an inbox needs in one call: each conversation embeds its contact (`id`, `name`, `email`, `phone`). ' +
      `${AS_YOU_SEE_IT} Filters combine; leave them out to list every conversation. A \`contactId\` of another ` +
      'company matches nothing (an empty page). An unknown status or sort, a malformed id or time, contradictory ' +
      `filters (\`unassigned\` with \`assignedAgentId\`) or a foreign cursor answer 400 naming the field. ${WALK}`,
  })
  @ApiPageResponse(AgentConversationView)
  async list(@CurrentAgent() agent: AgentPrincipal, @Query() query: ListConversationsQueryDto): Promise<Page<AgentConversationView>> {
    return this.inbox.list(agent, query);
  }

  @Get('counts')
  @ApiOperation({
    summary: 'Count open conversations for the inbox’s tabs',
    description:
      'Over open conversations: by status (`bot`, `queued`, `human`), without an agent (`unassigned`), snoozed ' +
      '(`snoozed`), yours (`mine`: human and assigned to you) and, of those, the ones with inbound messages you have ' +
      'not read (`mineUnread`). Each is counted on an index, whatever the company holds.',
  })
  @ApiOkResponse({ type: ConversationCountsView })
  async counts(@CurrentAgent() agent: AgentPrincipal): Promise<ConversationCountsView> {
    return this.inbox.counts(agent);
  }

  @Get(':id')
  @ApiOperation({
    summary: 'Get a conversation',
    description: `With its contact embedded. ${AS_YOU_SEE_IT} A missing, malformed or other company's id answers 404.`,
  })
  @ApiOkResponse({ type: AgentConversationView })
  @ApiProblemResponses(notFound('Conversation'))
  async get(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string): Promise<AgentConversationView> {
    return this.inbox.get(agent, id);
  }

  @Post(':id/read')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Mark the conversation read, for you, up to a message (default: its newest)',
    description:
      'Moves your read marker (each agent has its own) to `messageId`, a message of this conversation, or to its ' +
      'newest message. Markers only move forward: a message older than your marker answers the marker unchanged. ' +
      'Your `unreadCount` then counts the inbound messages after it, in every answer. A message of another ' +
      'conversation (or company), or a malformed id, answers 400; a missing or foreign conversation 404.',
  })
  @ApiOkResponse({ type: ReadStateView })
  @ApiProblemResponses(notFound('Conversation'))
  async markRead(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @Body() dto: MarkReadDto): Promise<ReadStateView> {
    return this.inbox.markRead(agent, id, dto.messageId);
  }

  @Post(':id/assign')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Assign to an active agent of your company (status human); reassigning a human conversation is allowed',
    description: `Assigning to the agent it already has changes nothing and emits no event. ${LIFE_CYCLE}`,
  })
  @ApiOkResponse({ type: AgentConversationView })
  @ApiProblemResponses(notFound('Conversation'), 409)
  async assign(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: AssignConversationDto,
  ): Promise<AgentConversationView> {
    return this.inbox.present(agent, await this.conversations.assign(agent.companyId, id, dto.agentId, { kind: 'agent', id: agent.agentId }));
  }

  @Post(':id/close')
  @HttpCode(200)
  @ApiOperation({ summary: 'Close a conversation', description: LIFE_CYCLE })
  @ApiOkResponse({ type: AgentConversationView })
  @ApiProblemResponses(notFound('Conversation'), 409)
  async close(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: CloseConversationDto,
  ): Promise<AgentConversationView> {
    return this.inbox.present(agent, await this.conversations.close(agent.companyId, id, dto.reason));
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Change priority, tags or subject; status only to queued (hand-off from bot, unassign from human)',
    description:
      `${LIFE_CYCLE} Entering the queue emits \`conversation.queued\`; auto-assignment (when on) reacts to it ` +
      'after this answers, so the answer shows the conversation queued and a later `conversation.assigned` tells who took it.',
  })
  @ApiOkResponse({ type: AgentConversationView })
  @ApiProblemResponses(notFound('Conversation'), 409)
  async update(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: UpdateConversationDto,
  ): Promise<AgentConversationView> {
    return this.inbox.present(agent, await this.conversations.update(agent.companyId, id, dto));
  }
}
