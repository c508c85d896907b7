import { Body, Controller, Get, HttpCode, Param, Post, Query, VERSION_NEUTRAL } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal, ApiKeyPrincipal } from '../auth/auth-principal.js';
import { ApiKeyAuth } from '../auth/decorators/api-key-auth.decorator.js';
import { CurrentAgent, CurrentApiKey } from '../auth/decorators/principal.decorator.js';
import { RequireScopes } from '../auth/decorators/require-scopes.decorator.js';
import { ApiEnvelopeErrorResponses, ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { exactlyOneOf } from '../common/exactly-one-of.js';
import { ApiPageResponse, type Page } from '../common/pagination/page.js';
import { PageQueryDto } from '../common/pagination/page-query.dto.js';
import { ConversationView, QueueStandingView } from '../conversations/conversation.view.js';
import { ApiDataEnvelope, envelope, type DataEnvelope } from '../webhooks/dto/envelope.js';
import { ConversationTransfers, TRANSFER_NEEDS_ASSIGNEE } from './conversation-transfers.js';
import { TransferConversationDto } from './dto/transfer-conversation.dto.js';
import { QueueEntryView, QueueViews } from './queue-views.js';

const ORDER = 'In routing order: priority (high, medium, low), then the longest waiting first; snoozed conversations wait outside it.';

@ApiTags('Teams')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@Controller()
export class RoutingController {
  constructor(
    private readonly queues: QueueViews,
    private readonly transfers: ConversationTransfers,
  ) {}

  @Get('teams/:id/queue')
  @ApiOperation({ summary: "A team's queue", description: `Any agent. ${ORDER}` })
  @ApiParam({ name: 'id', example: '6650f0c2a1b2c3d4e5f60740' })
  @ApiPageResponse(QueueEntryView, 'One page, in routing order')
  @ApiProblemResponses(notFound('Team', '6650f0c2a1b2c3d4e5f60740'))
  teamQueue(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @Query() query: PageQueryDto): Promise<Page<QueueEntryView>> {
    return this.queues.teamQueue(agent.companyId, id, query);
  }

  @Get('queue')
  @ApiOperation({ summary: 'The company queue (conversations of no team)', description: `Any agent. ${ORDER}` })
  @ApiPageResponse(QueueEntryView, 'One page, in routing order')
  companyQueue(@CurrentAgent() agent: AgentPrincipal, @Query() query: PageQueryDto): Promise<Page<QueueEntryView>> {
    return this.queues.companyQueue(agent.companyId, query);
  }

  @Post('conversations/:id/transfer')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Transfer a conversation to a team or an agent',
    description:
      "Exactly one of `teamId` (queued in that team's queue, unassigned) and `agentId` (human, assigned to them); " +
      '`note` becomes a private note. The assigned agent, any agent for an unassigned conversation, or supervisors and ' +
      'admins (403 otherwise). Emits `conversation.transferred`.',
  })
  @ApiParam({ name: 'id', example: '6650f0c2a1b2c3d4e5f60718' })
  @ApiOkResponse({ type: ConversationView })
  @ApiProblemResponses([403, TRANSFER_NEEDS_ASSIGNEE], notFound('Conversation'), 409)
  async transfer(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @Body() dto: TransferConversationDto): Promise<ConversationView> {
    exactlyOneOf(dto, ['teamId', 'agentId']);
    return this.transfers.transfer(agent, id, { teamId: dto.teamId, agentId: dto.agentId }, dto.note);
  }
}

/** Interface B: where a waiting customer stands, for the connector to tell them. */
@ApiTags('Interface B: queue')
@ApiKeyAuth()
@RequireScopes('messages:write')
@Controller({ path: 'api/external/conversations', version: VERSION_NEUTRAL })
export class ExternalQueueController {
  constructor(private readonly queues: QueueViews) {}

  @Get(':id/queue')
  @ApiOperation({
    summary: "A queued conversation's place in its queue",
    description: '`{ teamId, position, waitingSeconds }`; 404 when the conversation is not waiting in a queue (or is unknown).',
  })
  @ApiParam({ name: 'id', example: '6650f0c2a1b2c3d4e5f60718' })
  @ApiDataEnvelope(200, QueueStandingView, { description: 'Where it stands' })
  @ApiEnvelopeErrorResponses(401, [404, 'Conversation 6650f0c2a1b2c3d4e5f60718 not found in any queue: it is not waiting'], 429)
  async standing(@CurrentApiKey() apiKey: ApiKeyPrincipal, @Param('id') id: string): Promise<DataEnvelope<QueueStandingView>> {
    return envelope(await this.queues.standingOf(apiKey.companyId, id));
  }
}
