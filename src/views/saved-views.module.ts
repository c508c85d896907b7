import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { ContactsModule } from '../contacts/contacts.module.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { SearchModule } from '../search/search.module.js';
import { SavedView, SavedViewSchema } from './saved-view.schema.js';
import { SavedViewsController } from './saved-views.controller.js';
import { SavedViewsRepository } from './saved-views.repository.js';
import { SavedViewsService } from './saved-views.service.js';

/** `/v1/views`: saved filters, their results and counts (contract section 20). */
@Module({
  imports: [MongooseModule.forFeature([{ name: SavedView.name, schema: SavedViewSchema }]), SearchModule, ConversationsModule, ContactsModule],
  controllers: [SavedViewsController],
  providers: [SavedViewsRepository, SavedViewsService],
})
export class SavedViewsModule {}
