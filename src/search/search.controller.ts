import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { ApiProblemResponses } from '../common/errors/api-error-responses.js';
import { ApiPageResponse, type Page } from '../common/pagination/page.js';
import { ContactView } from '../contacts/contact.view.js';
import { AgentConversationView } from '../inbox/agent-conversation.view.js';
import { SearchContactsDto, SearchConversationsDto } from './dto/search.dto.js';
import { SearchService } from './search.service.js';

const FILTER_ERRORS =
  'A filter error answers 400 naming its place (`filter.or[0].and[2].op`) and what was expected: an unknown field or ' +
  "operator, an operator the field's type does not take, a value of the wrong type, more than 4 levels or 30 conditions.";

@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@Controller()
export class SearchController {
  constructor(private readonly search: SearchService) {}

  @Post('conversations/search')
  @HttpCode(200)
  @ApiTags('Conversations')
  @ApiOperation({
    summary: 'Search conversations with a filter (docs/filters.md)',
    description:
      'Conversations are shown as in `GET /v1/conversations`; pass `nextCursor` back as `cursor` with the same `sort`. ' +
      `A \`contact.*\` condition may match at most 1000 contacts (more: 400 asking for a narrower one). ${FILTER_ERRORS}`,
  })
  @ApiPageResponse(AgentConversationView)
  conversations(@CurrentAgent() agent: AgentPrincipal, @Body() dto: SearchConversationsDto): Promise<Page<AgentConversationView>> {
    return this.search.conversations(agent, dto);
  }

  @Post('contacts/search')
  @HttpCode(200)
  @ApiTags('Contacts')
  @ApiOperation({
    summary: 'Search contacts with a filter (docs/filters.md)',
    description: `\`sort\`: \`created\` (newest first) or \`name\` (A to Z). Pass \`nextCursor\` back as \`cursor\`. ${FILTER_ERRORS}`,
  })
  @ApiPageResponse(ContactView)
  contacts(@CurrentAgent() agent: AgentPrincipal, @Body() dto: SearchContactsDto): Promise<Page<ContactView>> {
    return this.search.contacts(agent, dto);
  }
}
