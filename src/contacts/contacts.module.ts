import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AttributesModule } from '../attributes/attributes.module.js';
import { ContactAttributes } from './contact-attributes.js';
import { Contact, ContactSchema } from './contact.schema.js';
import { ContactsController } from './contacts.controller.js';
import { ContactsRepository } from './contacts.repository.js';
import { ContactsService } from './contacts.service.js';

@Module({
  imports: [MongooseModule.forFeature([{ name: Contact.name, schema: ContactSchema }]), AttributesModule],
  controllers: [ContactsController],
  providers: [ContactsRepository, ContactsService, ContactAttributes],
  exports: [ContactsService],
})
export class ContactsModule {}
