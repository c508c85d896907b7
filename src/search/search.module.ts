import { Module } from '@nestjs/common';
import { AttributesModule } from '../attributes/attributes.module.js';
import { ContactsModule } from '../contacts/contacts.module.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { InboxModule } from '../inbox/inbox.module.js';
import { FilterCompiler } from './filter-compiler.js';
import { SearchController } from './search.controller.js';
import { SearchService } from './search.service.js';

/**
 * Search with the one filter language (contract section 20). FilterCompiler is exported for saved views and
 * automation rules: a company's filter checked against its definitions, and its query.
 */
@Module({
  imports: [AttributesModule, ContactsModule, ConversationsModule, InboxModule],
  controllers: [SearchController],
  providers: [FilterCompiler, SearchService],
  exports: [FilterCompiler, SearchService],
})
export class SearchModule {}
