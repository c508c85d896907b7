import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { ApiReplyWindowClosedResponse, REPLY_WINDOW_CLOSED } from '../channels/reply-window.js';
import { ApiProblemResponses } from '../common/errors/api-error-responses.js';
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
  @ApiProblemResponses(404)
  list(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Query() query: ListMessagesQueryDto,
  ): Promise<Page<MessageView>> {
    return this.messages.list(agent.companyId, id, query);
  }

  @Post(':id/messages')
  @ApiOperation({
    summary: 'Send a message to the contact (outbound, from you): text, or an approved template by name',
    description:
      'Exactly one of `text` or `template` (400 otherwise). Sets the conversation’s firstResponseAt on its first ' +
      'reply. A closed conversation answers 400.\n\n' +
      '**Reply window.** On a channel with `replyWindowHours`, free-form text goes through only until the ' +
      'conversation’s `replyWindowExpiresAt`; after it (or before the contact ever wrote) it answers 409 with ' +
      `problem type \`${REPLY_WINDOW_CLOSED}\` and \`closedAt\`. A template goes through at any time.\n\n` +
      '**Templates.** `template: { name, language, variables }` names an `approved` template of the conversation’s ' +
      'channel (400 `template.name` otherwise) with one variable per placeholder (400 `template.variables` otherwise). ' +
      'The message has `type: "template"`, `template: { id, name, language, variables }` and the rendered `text`; ' +
      '`message.sent` carries it, so the connector sends the template by name.',
  })
  @ApiCreatedResponse({ type: MessageView })
  @ApiProblemResponses(404)
  @ApiReplyWindowClosedResponse()
  async send(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: SendMessageDto,
  ): Promise<MessageView> {
    return (await this.messages.send(agent, id, dto)).message;
  }
}
