import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { MongooseModule } from '@nestjs/mongoose';
import { EventConsumerLane, EventConsumerLaneSchema } from './consumers/event-consumer-lane.schema.js';
import { EventConsumers } from './consumers/event-consumers.js';
import { EventLogHeadsRepository, EventLogRepository } from './event-log.repository.js';
import { EventLogHead, EventLogHeadSchema, LoggedEvent, LoggedEventSchema } from './event-log.schema.js';
import { EventPublisher } from './event-publisher.js';
import { EventRelay } from './event-relay.js';
import { PendingEventSweep } from './pending-event-sweep.js';

/**
 * The event log, the spine of everything that reacts: changes are written with their events (pending),
 * EventRelay appends them to the log, and every reaction is an EventConsumer reading the log from a durable
 * position. In-process, each appended batch is also emitted on the event-emitter bus (EVENTS_LOGGED).
 */
@Global()
@Module({
  imports: [
    DiscoveryModule,
    EventEmitterModule.forRoot({ wildcard: false, ignoreErrors: false }),
    MongooseModule.forFeature([
      { name: LoggedEvent.name, schema: LoggedEventSchema },
      { name: EventLogHead.name, schema: EventLogHeadSchema },
      { name: EventConsumerLane.name, schema: EventConsumerLaneSchema },
    ]),
  ],
  providers: [EventLogRepository, EventLogHeadsRepository, EventConsumers, EventRelay, PendingEventSweep, EventPublisher],
  exports: [EventLogRepository, EventLogHeadsRepository, EventConsumers, EventRelay, EventPublisher],
})
export class EventsModule {}
