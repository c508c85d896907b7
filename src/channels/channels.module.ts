import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { SettingsModule } from '../settings/settings.module.js';
import { TeamsModule } from '../teams/teams.module.js';
import { Channel, ChannelSchema } from './channel.schema.js';
import { ChannelsController } from './channels.controller.js';
import { ChannelsRepository } from './channels.repository.js';
import { ChannelsService } from './channels.service.js';
import { ReplyWindowWarnings } from './reply-window-warnings.js';

/** Channels as records (contract section 17), the reply windows they set, and the warnings before those close. */
@Module({
  imports: [MongooseModule.forFeature([{ name: Channel.name, schema: ChannelSchema }]), ConversationsModule, SettingsModule, TeamsModule],
  controllers: [ChannelsController],
  providers: [ChannelsRepository, ChannelsService, ReplyWindowWarnings],
  exports: [ChannelsService],
})
export class ChannelsModule {}
