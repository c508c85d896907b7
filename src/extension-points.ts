/**
 * What a module extending Parley through Nest DI may use (see docs/extending.md and `examples/`):
 * reacting to the event log, adding flow step types, and the services that change conversations and messages
 * under their rules. Anything not exported here is internal and may change.
 */
export { ConsumesEvents, type EventConsumerOptions, type EventHandler } from './events/consumers/consumes-events.decorator.js';
export { EventConsumers } from './events/consumers/event-consumers.js';
export type { AnyDomainEvent, DomainEvent, DomainEventData, DomainEventName } from './events/domain-events.js';
export { DOMAIN_EVENTS } from './events/domain-events.js';
export { EventPublisher } from './events/event-publisher.js';
export { FlowStepDto } from './flows/dto/flow-steps.dto.js';
export { FlowStepDefinition } from './flows/steps/flow-step-definition.decorator.js';
export { HandlesFlowStep, type FlowStepContext, type FlowStepHandler } from './flows/steps/flow-step-handlers.js';
export { ConversationsModule } from './conversations/conversations.module.js';
export { ConversationsService } from './conversations/conversations.service.js';
export { ConversationOpenings } from './conversations/conversation-openings.js';
export { MessagesModule } from './messages/messages.module.js';
export { MessagesService } from './messages/messages.service.js';
export { TenantRepository, type CompanyId, type Stored } from './database/tenancy/tenant-repository.js';
export { tenantScopePlugin } from './database/tenancy/tenant-scope.plugin.js';
export { isDuplicateKeyError } from './database/mongo-errors.js';
