import { Module } from '@nestjs/common';
import { BusinessHoursModule } from '../business-hours/business-hours.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { SettingsModule } from '../settings/settings.module.js';
import { AutoReplies } from './auto-replies.js';
import { AutoRepliesConsumer } from './auto-replies.consumer.js';

/** The welcome and out-of-hours replies (contract section 16). */
@Module({
  imports: [BusinessHoursModule, MessagesModule, SettingsModule],
  providers: [AutoReplies, AutoRepliesConsumer],
  exports: [AutoReplies],
})
export class AutoRepliesModule {}
