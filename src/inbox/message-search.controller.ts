import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { ApiProblemResponses } from '../common/errors/api-error-responses.js';
import { ApiPageResponse, type Page } from '../common/pagination/page.js';
import { SearchMessagesQueryDto } from './dto/search-messages-query.dto.js';
import { MessageSearchHitView } from './message-search.view.js';
import { MessageSearchService } from './message-search.service.js';

@ApiTags('Messages')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@Controller('messages')
export class MessageSearchController {
  constructor(private readonly search: MessageSearchService) {}

  @Get('search')
  @ApiOperation({
    summary: 'Search your company’s messages, newest first',
    description:
      'Messages whose text or caption holds every word of `q`, case- and accent-insensitive (`cafe` finds “Café”), ' +
      'private notes included; a `"quoted phrase"` must appear as written. Words are matched as MongoDB’s text ' +
      'search matches phrases: each must appear in the message, at least one of them as a whole word (the others ' +
      'may be part of a longer word: `car` is in “scarf”); no stemming (`refund` does not find “refunds”). ' +
      'Each hit comes with its conversation as you see it (`unreadCount`, `lastReadAt`), and media with a signed ' +
      '`downloadUrl`. Filters combine; a `conversationId` or `contactId` of another company matches nothing (an ' +
      'empty page). Pass `nextCursor` back as `cursor`, with the same `q` and filters. `q` empty (after trimming) or ' +
      'longer than 200 characters, a malformed id or time, or `before` not after `after` answers 400 naming the field.',
  })
  @ApiPageResponse(MessageSearchHitView, 'One page of hits, newest first')
  find(@CurrentAgent() agent: AgentPrincipal, @Query() query: SearchMessagesQueryDto): Promise<Page<MessageSearchHitView>> {
    return this.search.search(agent, query);
  }
}
