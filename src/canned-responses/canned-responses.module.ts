import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { CannedResponse, CannedResponseSchema } from './canned-response.schema.js';
import { CannedResponsesController } from './canned-responses.controller.js';
import { CannedResponsesRepository } from './canned-responses.repository.js';
import { CannedResponsesService } from './canned-responses.service.js';

/** `/v1/canned-responses`; sending one is the messages module's (POST /conversations/:id/messages). */
@Module({
  imports: [MongooseModule.forFeature([{ name: CannedResponse.name, schema: CannedResponseSchema }])],
  controllers: [CannedResponsesController],
  providers: [CannedResponsesRepository, CannedResponsesService],
  exports: [CannedResponsesService],
})
export class CannedResponsesModule {}
