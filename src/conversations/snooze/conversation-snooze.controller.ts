import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../../auth/auth-principal.js';
import { CurrentAgent } from '../../auth/decorators/principal.decorator.js';
import { ApiProblemResponses, notFound } from '../../common/errors/api-error-responses.js';
import { parseTimestamp } from '../../messages/timestamp.js';
import { AgentConversationView } from '../../inbox/agent-conversation.view.js';
import { InboxService } from '../../inbox/inbox.service.js';
import { SnoozeConversationDto } from '../dto/snooze-conversation.dto.js';
import { ConversationSnoozes } from './conversation-snoozes.js';
import { MAX_SNOOZE_DAYS } from './snooze-changes.js';

/** Snooze and unsnooze a conversation (contract section 15). Registered by ConversationsApiModule. */
@ApiTags('Conversations')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, notFound('Conversation'), 429)
@Controller('conversations')
export class ConversationSnoozeController {
  constructor(
    private readonly snoozes: ConversationSnoozes,
    private readonly inbox: InboxService,
  ) {}

  @Post(':id/snooze')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Snooze a human or queued conversation until a time (status unchanged)',
    description:
      `\`until\` must be in the future and at most ${MAX_SNOOZE_DAYS} days ahead; only \`human\` and \`queued\` ` +
      'conversations can be snoozed (400 otherwise). Answers the conversation with `snoozedUntil` and emits ' +
      '`conversation.snoozed`. Snoozing a snoozed conversation moves its wake-up (the same `until` again changes ' +
      'nothing). It wakes, clearing `snoozedUntil` and emitting `conversation.unsnoozed` with its `reason`, at ' +
      '`until` (`timer`, within a few seconds, once, whatever process runs or dies), when the contact writes ' +
      '(`contact_message`, before that message is stored) or by POST /conversations/{id}/unsnooze (`agent`). ' +
      'Closing it clears the snooze too, without `conversation.unsnoozed`. Auto-assignment leaves a snoozed ' +
      'queued conversation in the queue until it wakes. A concurrent change answers 409 (read it again and retry).',
  })
  @ApiOkResponse({ type: AgentConversationView })
  @ApiProblemResponses(409)
  async snooze(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: SnoozeConversationDto,
  ): Promise<AgentConversationView> {
    const until = parseTimestamp(dto.until)!;
    return this.inbox.present(agent, await this.snoozes.snooze(agent.companyId, id, until));
  }

  @Post(':id/unsnooze')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Wake a snoozed conversation now',
    description:
      'Clears `snoozedUntil` and emits `conversation.unsnoozed` with `reason: "agent"`. A conversation that is ' +
      'not snoozed is answered as it is, with no event.',
  })
  @ApiOkResponse({ type: AgentConversationView })
  @ApiProblemResponses(409)
  async unsnooze(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string): Promise<AgentConversationView> {
    return this.inbox.present(agent, await this.snoozes.unsnooze(agent.companyId, id));
  }
}
