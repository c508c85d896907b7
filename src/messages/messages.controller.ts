import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiCreatedResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { ApiReplyWindowClosedResponse, REPLY_WINDOW_CLOSED } from '../channels/reply-window.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { ApiPageResponse, type Page } from '../common/pagination/page.js';
import { ListMessagesQueryDto } from './dto/list-messages-query.dto.js';
import { SendMessageDto } from './dto/send-message.dto.js';
import { MessageComposer } from './message-composer.js';
import { MessageHistory } from './message-history.js';
import { MessageView } from './message.view.js';

/** The messages of a conversation. */
@ApiTags('Messages')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@Controller('conversations')
export class MessagesController {
  constructor(
    private readonly history: MessageHistory,
    private readonly composer: MessageComposer,
  ) {}

  @Get(':id/messages')
  @ApiOperation({
    summary: 'List messages, always in ascending time order',
    description:
      'Without `after`: the newest `limit` messages older than `before` (or the newest of all); `nextCursor` ' +
      'pages further back. With `after`: the oldest `limit` messages newer than it, up to `before` when given; ' +
      '`nextCursor` pages forward. Pass `nextCursor` back as `cursor` (alone: it carries the bounds). ' +
      'Messages of the same millisecond are ordered by id. Private notes are included (`private: true`); ' +
      '`private=false` leaves them out, `private=true` lists only them.',
  })
  @ApiPageResponse(MessageView, 'One page, in ascending time order')
  @ApiProblemResponses(notFound('Conversation'))
  list(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Query() query: ListMessagesQueryDto,
  ): Promise<Page<MessageView>> {
    return this.history.list(agent.companyId, id, query);
  }

  @Post(':id/messages')
  @ApiOperation({
    summary: 'Send to the contact (text, a canned response or an approved template), or add a private note',
    description:
      'Give exactly one of `text`, `cannedResponseId` and `template` (400 naming the fields otherwise).\n\n' +
      '- `{ text }`: an outbound message from you (`message.sent`, delivery `pending`); sets the conversation’s ' +
      'firstResponseAt on its first reply.\n' +
      '- `{ cannedResponseId }`: that canned response, its placeholders filled in for this conversation (its contact, ' +
      'you, your company; a missing value renders as empty), sent as your text message. A response that is not your ' +
      'company’s answers 400.\n' +
      '- `{ template: { name, language, variables } }`: an `approved` template of the conversation’s channel (400 ' +
      '`template.name` otherwise) with one variable per placeholder (400 `template.variables` otherwise). The message ' +
      'has `type: "template"`, `template: { id, name, language, variables }` and the rendered `text`; `message.sent` ' +
      'carries it, so the connector sends the template by name.\n' +
      '- `{ text, private: true, mentions? }`: a private note for your team (`direction: "internal"`, `private: true`, ' +
      '`delivery: null`), never sent to the contact: no `message.sent`, no effect on lastMessageAt, firstResponseAt, ' +
      'SLA clocks or message figures. It emits `conversation.note_added` `{ message, conversation, mentions }`; ' +
      '`mentions` must be active agents of your company (400 otherwise). Notes may be added to closed conversations.\n\n' +
      '**Reply window.** On a channel with `replyWindowHours`, free-form messages (text, canned responses) go through ' +
      'only until the conversation’s `replyWindowExpiresAt`; after it (or before the contact ever wrote) they answer 409 ' +
      `with problem type \`${REPLY_WINDOW_CLOSED}\` and \`closedAt\`. Templates and notes go through at any time.\n\n` +
      'Sending to the contact on a closed conversation answers 400.',
  })
  // One example per mode: the properties' own examples together would name every mode at once, a body it refuses.
  @ApiBody({
    type: SendMessageDto,
    examples: {
      text: { summary: 'A text message', value: { text: 'Your refund is on its way.' } },
      note: { summary: 'A private note mentioning an agent', value: { text: 'Refund approved by finance', private: true, mentions: ['6650f0c2a1b2c3d4e5f60701'] } },
      canned: { summary: 'A canned response', value: { cannedResponseId: '6650f0c2a1b2c3d4e5f60730' } },
      template: { summary: 'An approved template', value: { template: { name: 'order_shipped', language: 'en-US', variables: ['Grace', '1042'] } } },
    },
  })
  @ApiCreatedResponse({ type: MessageView })
  @ApiProblemResponses(notFound('Conversation'))
  @ApiReplyWindowClosedResponse()
  send(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @Body() dto: SendMessageDto): Promise<MessageView> {
    return this.composer.send(agent, id, dto);
  }
}
