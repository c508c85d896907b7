import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { ApiReplyWindowClosedResponse } from '../channels/reply-window.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { ApiPageResponse, type Page } from '../common/pagination/page.js';
import { MessagesService } from '../messages/messages.service.js';
import { ConversationView } from './conversation.view.js';
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

/** The conversation routes; their messages are MessagesController's. Registered by ConversationsApiModule. */
@ApiTags('Conversations')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@Controller('conversations')
export class ConversationsController {
  constructor(
    private readonly conversations: ConversationsService,
    private readonly messages: MessagesService,
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
  @ApiCreatedResponse({ type: ConversationView })
  @ApiReplyWindowClosedResponse('the contact already has an open conversation on the channel (about:blank)')
  async start(@CurrentAgent() agent: AgentPrincipal, @Body() dto: CreateConversationDto): Promise<ConversationView> {
    return this.messages.startConversation(agent, dto);
  }

  @Get()
  @ApiOperation({
    summary: 'List conversations, newest first; pass `nextCursor` back as `startAfter`',
    description:
      'Each conversation embeds its contact (`id`, `name`, `email`, `phone`), so an inbox renders from one call. ' +
      'Filters combine; leave them out to list every conversation.',
  })
  @ApiPageResponse(ConversationView)
  async list(
    @CurrentAgent() agent: AgentPrincipal,
    @Query() query: ListConversationsQueryDto,
  ): Promise<Page<ConversationView>> {
    return this.conversations.list(agent.companyId, query);
  }

  @Get(':id')
  @ApiOperation({
    summary: 'Get a conversation',
    description: "With its contact embedded. A missing, malformed or other company's id answers 404.",
  })
  @ApiOkResponse({ type: ConversationView })
  @ApiProblemResponses(notFound('Conversation'))
  async get(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string): Promise<ConversationView> {
    return this.conversations.getOrThrow(agent.companyId, id);
  }

  @Post(':id/assign')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Assign to an active agent of your company (status human); reassigning a human conversation is allowed',
    description: `Assigning to the agent it already has changes nothing and emits no event. ${LIFE_CYCLE}`,
  })
  @ApiOkResponse({ type: ConversationView })
  @ApiProblemResponses(notFound('Conversation'), 409)
  async assign(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: AssignConversationDto,
  ): Promise<ConversationView> {
    return this.conversations.assign(agent.companyId, id, dto.agentId, { kind: 'agent', id: agent.agentId });
  }

  @Post(':id/close')
  @HttpCode(200)
  @ApiOperation({ summary: 'Close a conversation', description: LIFE_CYCLE })
  @ApiOkResponse({ type: ConversationView })
  @ApiProblemResponses(notFound('Conversation'), 409)
  async close(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: CloseConversationDto,
  ): Promise<ConversationView> {
    return this.conversations.close(agent.companyId, id, dto.reason);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Change priority, tags or subject; status only to queued (hand-off from bot, unassign from human)',
    description:
      `${LIFE_CYCLE} Entering the queue emits \`conversation.queued\`; auto-assignment (when on) reacts to it ` +
      'after this answers, so the answer shows the conversation queued and a later `conversation.assigned` tells who took it.',
  })
  @ApiOkResponse({ type: ConversationView })
  @ApiProblemResponses(notFound('Conversation'), 409)
  async update(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: UpdateConversationDto,
  ): Promise<ConversationView> {
    return this.conversations.update(agent.companyId, id, dto);
  }
}
