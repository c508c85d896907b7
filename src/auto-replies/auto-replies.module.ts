import { Module } from '@nestjs/common';
import { BusinessHoursModule } from '../business-hours/business-hours.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { SettingsModule } from '../settings/settings.module.js';
import { AutoReplies } from './auto-replies.js';

/** The welcome and out-of-hours replies (contract section 16), sent by the inbound flows' consumer before flows run. */
@Module({
  imports: [BusinessHoursModule, MessagesModule, SettingsModule],
  providers: [AutoReplies],
  exports: [AutoReplies],
})
export class AutoRepliesModule {}
