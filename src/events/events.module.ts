import { Global, Module } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { DomainEventBus } from './domain-event-bus.js';

/** The event-emitter bus and its typed publisher, available to every module. */
@Global()
@Module({
  imports: [EventEmitterModule.forRoot({ wildcard: false, ignoreErrors: false })],
  providers: [DomainEventBus],
  exports: [DomainEventBus],
})
export class EventsModule {}
