import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../../auth/auth-principal.js';
import { CurrentAgent } from '../../auth/decorators/principal.decorator.js';
import { ApiProblemResponses } from '../../common/errors/api-error-responses.js';
import { RateLimitWeight } from '../../common/rate-limit/rate-limit.guard.js';
import { BulkConversationsDto, MAX_BULK_IDS } from '../dto/bulk-conversations.dto.js';
import { BulkResultView } from './bulk-result.view.js';
import { ConversationBulkActions } from './conversation-bulk-actions.js';

/**
 * Each id costs what its single route costs (100 ids took 1.4 to 7.4 s of server time), so a bulk counts one request
 * of the rate limits per id, read before validation: a body the validation refuses counts what it names, at most
 * MAX_BULK_IDS.
 */
export function bulkWeight(request: { body?: unknown }): number {
  const ids = (request.body as { ids?: unknown } | undefined)?.ids;
  return Array.isArray(ids) ? Math.min(ids.length, MAX_BULK_IDS) : 1;
}

/** `POST /v1/conversations/bulk` (contract section 15). Registered by ConversationsApiModule. */
@ApiTags('Conversations')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@Controller('conversations')
export class ConversationBulkController {
  constructor(private readonly bulk: ConversationBulkActions) {}

  @Post('bulk')
  @HttpCode(200)
  @RateLimitWeight(bulkWeight)
  @ApiOperation({
    summary: `Apply one action to up to ${MAX_BULK_IDS} conversations: assign, close, set_priority, add_tags or snooze`,
    description:
      'Each id is acted on on its own, one after another, through the same rules and events as its single route ' +
      '(POST /conversations/{id}/assign, /close, PATCH priority, the flow step add_tags, POST /conversations/{id}/snooze). ' +
      'Answers 200 with one result per id, in the order of `ids`: `status` is what the single route would have ' +
      'answered (200, 400, 404, 409), with the conversation on success and the single route\'s error message ' +
      'otherwise; one failing id does not stop the others. The action\'s fields are checked first: a field the ' +
      'action needs and lacks, one it does not take, or an `until` out of bounds answers 400 for the whole request, ' +
      'and nothing is changed. **Rate limits:** each id counts as one request (a bulk of 100 ids as 100), never more ' +
      'than a whole limit.',
  })
  @ApiOkResponse({ type: BulkResultView })
  bulkAction(@CurrentAgent() agent: AgentPrincipal, @Body() dto: BulkConversationsDto): Promise<BulkResultView> {
    return this.bulk.apply(agent, dto);
  }
}
