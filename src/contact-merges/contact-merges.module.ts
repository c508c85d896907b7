import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { ContactsModule } from '../contacts/contacts.module.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { ContactMergeRunner } from './contact-merge-runner.js';
import { ContactMerge, ContactMergeSchema } from './contact-merge.schema.js';
import { ContactMergesController } from './contact-merges.controller.js';
import { ContactMergesRepository } from './contact-merges.repository.js';
import { ContactMergesService } from './contact-merges.service.js';

/** Contact merges and their undo (contract section 22). */
@Module({
  imports: [MongooseModule.forFeature([{ name: ContactMerge.name, schema: ContactMergeSchema }]), ContactsModule, ConversationsModule],
  controllers: [ContactMergesController],
  providers: [ContactMergesRepository, ContactMergesService, ContactMergeRunner],
})
export class ContactMergesModule {}
