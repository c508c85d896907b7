import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AuthModule } from '../auth/auth.module.js';
import { EventFeedController } from './event-feed.controller.js';
import { EventFeed } from './event-feed.service.js';
import { EventStreamSlot, EventStreamSlotSchema } from './event-stream-slot.schema.js';
import { EventStreamSlotsRepository } from './event-stream-slots.repository.js';
import { EventStreams } from './event-streams.service.js';
import { EventTailer } from './event-tailer.js';
import { ExternalEventFeedController } from './external-event-feed.controller.js';

/**
 * The event feed (contract section 10): the event log read by integrators, as a list and as Server-Sent Events
 * streams, on both interfaces. Streams are fed by this process's one change feed of the log (EventTailer).
 */
@Module({
  imports: [AuthModule, MongooseModule.forFeature([{ name: EventStreamSlot.name, schema: EventStreamSlotSchema }])],
  controllers: [EventFeedController, ExternalEventFeedController],
  providers: [EventFeed, EventTailer, EventStreams, EventStreamSlotsRepository],
})
export class EventFeedModule {}
