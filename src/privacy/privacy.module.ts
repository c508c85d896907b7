import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AnswerSeal } from '../common/idempotency/answer-seal.js';
import { MediaStorageModule } from '../media/media-storage.module.js';
import { ContactErasure } from './contact-erasure.js';
import { ContactExport } from './contact-export.js';
import { ConversationRetention } from './conversation-retention.js';
import { ExportFiles } from './export-files.js';
import { ExportLinks } from './export-links.js';
import { PrivacyController, SignedExportController } from './privacy.controller.js';
import { PrivacyRequest, PrivacyRequestSchema } from './privacy-request.schema.js';
import { PrivacyRequestsRepository } from './privacy-requests.repository.js';
import { PrivacyRequestsService } from './privacy-requests.service.js';

/** Contract section 23: contact exports and erasures, on durable timers. */
@Module({
  imports: [MongooseModule.forFeature([{ name: PrivacyRequest.name, schema: PrivacyRequestSchema }]), MediaStorageModule],
  controllers: [PrivacyController, SignedExportController],
  providers: [
    PrivacyRequestsRepository,
    PrivacyRequestsService,
    ContactErasure,
    ContactExport,
    ConversationRetention,
    ExportFiles,
    ExportLinks,
    AnswerSeal,
  ],
  exports: [PrivacyRequestsService],
})
export class PrivacyModule {}
