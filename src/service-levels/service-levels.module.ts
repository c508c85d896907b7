import { Module } from '@nestjs/common';
import { BusinessHoursModule } from '../business-hours/business-hours.module.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { SlaPoliciesModule } from '../sla-policies/sla-policies.module.js';
import { SlaConsumer } from './sla.consumer.js';
import { SlaDeadlines } from './sla-deadlines.js';
import { SlaRecompute } from './sla-recompute.js';
import { SlaTimers } from './sla-timers.js';
import { SlaTracker } from './sla-tracker.js';

/**
 * SLA clocks at work (contract section 16): a consumer of the event log keeps each conversation's SLA in step with
 * it, durable timers fire the warnings and breaches, and a change of business hours computes their deadlines again.
 */
@Module({
  imports: [BusinessHoursModule, ConversationsModule, MessagesModule, SlaPoliciesModule],
  providers: [SlaTracker, SlaTimers, SlaDeadlines, SlaRecompute, SlaConsumer],
})
export class ServiceLevelsModule {}
