import { Injectable } from '@nestjs/common';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import type { Page } from '../common/pagination/page.js';
import type { ContactView } from '../contacts/contact.view.js';
import { ContactQueries } from '../contacts/contact-queries.js';
import { ConversationLists } from '../conversations/conversation-lists.js';
import type { AgentConversationView } from '../inbox/agent-conversation.view.js';
import { InboxService } from '../inbox/inbox.service.js';
import type { SearchContactsDto, SearchConversationsDto } from './dto/search.dto.js';
import { FilterCompiler } from './filter-compiler.js';

/** `POST /v1/conversations/search` and `POST /v1/contacts/search` (contract section 20). */
@Injectable()
export class SearchService {
  constructor(
    private readonly filters: FilterCompiler,
    private readonly lists: ConversationLists,
    private readonly contactQueries: ContactQueries,
    private readonly inbox: InboxService,
  ) {}

  async conversations(agent: AgentPrincipal, dto: SearchConversationsDto): Promise<Page<AgentConversationView>> {
    const query = await this.filters.query(agent.companyId, await this.filters.parse(agent.companyId, 'conversation', dto.filter));
    const page = await this.lists.filteredPage(agent.companyId, query, dto.sort, dto.cursor, dto.limit);
    return { data: await this.inbox.forAgent(agent, page.data), nextCursor: page.nextCursor };
  }

  async contacts(agent: AgentPrincipal, dto: SearchContactsDto): Promise<Page<ContactView>> {
    const query = await this.filters.query(agent.companyId, await this.filters.parse(agent.companyId, 'contact', dto.filter));
    return this.contactQueries.searchPage(agent.companyId, query, dto.sort, dto.limit, dto.cursor);
  }
}
