import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { ConversationsModule } from '../../src/extension-points.js';
import { ConversationDigest, ConversationDigestSchema } from './conversation-digest.schema.js';
import { ConversationDigestsConsumer, ConversationDigestsRepository } from './conversation-digests.consumer.js';
import { SetSubjectStep } from './set-subject.step.js';

/**
 * An extension of Parley built only on its extension points (src/extension-points.ts): a flow step type and a
 * consumer of the event log. Import it next to `AppModule.forRoot()` (see examples/main.ts).
 */
@Module({
  imports: [MongooseModule.forFeature([{ name: ConversationDigest.name, schema: ConversationDigestSchema }]), ConversationsModule],
  providers: [ConversationDigestsRepository, ConversationDigestsConsumer, SetSubjectStep],
})
export class ConversationDigestsModule {}
