import { Body, Controller, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { ApiReplyWindowClosedResponse, REPLY_WINDOW_CLOSED } from '../channels/reply-window.js';
import { ApiProblemResponses } from '../common/errors/api-error-responses.js';
import { ProactiveMessageDto } from './dto/proactive-message.dto.js';
import { ProactiveMessageView } from './proactive-message.view.js';
import { ProactiveMessagesService } from './proactive-messages.service.js';

@ApiTags('Messages')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@Controller('messages')
export class ProactiveMessagesController {
  constructor(private readonly proactive: ProactiveMessagesService) {}

  @Post()
  @ApiOperation({
    summary: 'Message a contact first: finds or creates the contact, uses its open conversation or opens one, sends',
    description:
      '`to` names the contact by `contactId`, `phone` or `email` (a phone or e-mail without a contact creates one, ' +
      'named `name`). The message goes into the contact’s open conversation on `channel`, or a new one assigned to ' +
      'you (`human`, with `conversation.created` and `conversation.assigned`). Exactly one of `text` or `template`.\n\n' +
      '**Reply window.** A new conversation on a channel with `replyWindowHours` has no open window, so only a ' +
      `\`template\` is accepted there; \`text\` answers 409 (problem type \`${REPLY_WINDOW_CLOSED}\`, \`closedAt: null\`), ` +
      'and so does text to an open conversation whose window has closed. Whatever is refused (400, 409) stores ' +
      'nothing: no contact, no conversation. An inactive channel answers 409.\n\n' +
      'Send an `Idempotency-Key` so that a retry cannot send twice.',
  })
  @ApiCreatedResponse({ type: ProactiveMessageView })
  @ApiReplyWindowClosedResponse('the channel is inactive (about:blank)')
  send(@CurrentAgent() agent: AgentPrincipal, @Body() dto: ProactiveMessageDto): Promise<ProactiveMessageView> {
    return this.proactive.send(agent, dto);
  }
}
