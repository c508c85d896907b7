import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AttributesModule } from '../attributes/attributes.module.js';
import { ContactAttributes } from './contact-attributes.js';
import { ContactNameKeys } from './contact-name-keys.js';
import { ContactDuplicates } from './contact-duplicates.js';
import { ContactIdentities } from './contact-identities.js';
import { ContactQueries } from './contact-queries.js';
import { Contact, ContactSchema } from './contact.schema.js';
import { ContactsController } from './contacts.controller.js';
import { ContactsRepository } from './contacts.repository.js';
import { ContactsService } from './contacts.service.js';

@Module({
  imports: [MongooseModule.forFeature([{ name: Contact.name, schema: ContactSchema }]), AttributesModule],
  controllers: [ContactsController],
  providers: [ContactsRepository, ContactsService, ContactIdentities, ContactQueries, ContactDuplicates, ContactAttributes, ContactNameKeys],
  exports: [ContactsService, ContactIdentities, ContactQueries, ContactsRepository],
})
export class ContactsModule {}
