import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { ApiPageResponse, type Page } from '../common/pagination/page.js';
import { ListMessagesQueryDto } from './dto/list-messages-query.dto.js';
import { SendMessageDto } from './dto/send-message.dto.js';
import { MessageView } from './message.view.js';
import { MessagesService } from './messages.service.js';

/** The messages of a conversation. */
@ApiTags('Messages')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@Controller('conversations')
export class MessagesController {
  constructor(private readonly messages: MessagesService) {}

  @Get(':id/messages')
  @ApiOperation({
    summary: 'List messages, always in ascending time order',
    description:
      'Without `after`: the newest `limit` messages older than `before` (or the newest of all); `nextCursor` ' +
      'pages further back. With `after`: the oldest `limit` messages newer than it, up to `before` when given; ' +
      '`nextCursor` pages forward. Pass `nextCursor` back as `cursor` (alone: it carries the bounds). ' +
      'Messages of the same millisecond are ordered by id.',
  })
  @ApiPageResponse(MessageView, 'One page, in ascending time order')
  @ApiProblemResponses(notFound('Conversation'))
  list(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Query() query: ListMessagesQueryDto,
  ): Promise<Page<MessageView>> {
    return this.messages.list(agent.companyId, id, query);
  }

  @Post(':id/messages')
  @ApiOperation({
    summary: 'Send a text message to the contact (outbound, from you)',
    description: 'Sets the conversation’s firstResponseAt on its first reply. A closed conversation answers 400.',
  })
  @ApiCreatedResponse({ type: MessageView })
  @ApiProblemResponses(notFound('Conversation'))
  async send(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: SendMessageDto,
  ): Promise<MessageView> {
    const sent = await this.messages.sendText(agent.companyId, id, dto.text, { type: 'agent', id: agent.agentId });
    return sent.message;
  }
}
