import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AgentsApiModule } from './agents/agents-api.module.js';
import { AnalyticsModule } from './analytics/analytics.module.js';
import { AuditModule } from './audit/audit.module.js';
import { ApiKeysModule } from './api-keys/api-keys.module.js';
import { AttributesModule } from './attributes/attributes.module.js';
import { AuthModule } from './auth/auth.module.js';
import { AuthenticationGuard } from './auth/guards/authentication.guard.js';
import { AutomationRulesModule } from './automation-rules/automation-rules.module.js';
import { AutoRepliesModule } from './auto-replies/auto-replies.module.js';
import { BusinessHoursModule } from './business-hours/business-hours.module.js';
import { CannedResponsesModule } from './canned-responses/canned-responses.module.js';
import { ChannelsModule } from './channels/channels.module.js';
import { PermissionsGuard } from './auth/guards/permissions.guard.js';
import { IdempotencyGuard } from './common/idempotency/idempotency.guard.js';
import { IdempotencyModule } from './common/idempotency/idempotency.module.js';
import { LoggingModule } from './common/logging/logging.module.js';
import { RouteMetadataModule } from './common/route-metadata.js';
import { RateLimitGuard } from './common/rate-limit/rate-limit.guard.js';
import { RateLimitModule } from './common/rate-limit/rate-limit.module.js';
import { AppConfigModule } from './config/app-config.module.js';
import { ContactMergesModule } from './contact-merges/contact-merges.module.js';
import { ContactsModule } from './contacts/contacts.module.js';
import { ConversationsApiModule } from './conversations/conversations-api.module.js';
import { CsatModule } from './csat/csat.module.js';
import { DatabaseModule } from './database/database.module.js';
import { EventFeedModule } from './event-feed/event-feed.module.js';
import { EventsModule } from './events/events.module.js';
import { LanesModule } from './lanes/lanes.module.js';
import { FlowsModule } from './flows/flows.module.js';
import { HealthModule } from './health/health.module.js';
import { InboundModule } from './inbound/inbound.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { MediaModule } from './media/media.module.js';
import { MessageTemplatesModule } from './message-templates/message-templates.module.js';
import { MessagesModule } from './messages/messages.module.js';
import { SearchModule } from './search/search.module.js';
import { PrivacyModule } from './privacy/privacy.module.js';
import { SeedModule } from './seed/seed.module.js';
import { SavedViewsModule } from './views/saved-views.module.js';
import { ServiceLevelsModule } from './service-levels/service-levels.module.js';
import { SettingsModule } from './settings/settings.module.js';
import { SlaPoliciesModule } from './sla-policies/sla-policies.module.js';
import { TeamsApiModule } from './teams/teams-api.module.js';
import { TranscriptsModule } from './transcripts/transcripts.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';

@Module({})
export class AppModule {
  /**
   * Builds the application from an environment (process.env by default; tests pass their own).
   * Throws a ConfigurationError naming every bad variable.
   */
  static forRoot(env: Record<string, string | undefined> = process.env): DynamicModule {
    return {
      module: AppModule,
      imports: [
        AppConfigModule.forRoot(env),
        LoggingModule.forRoot(),
        RouteMetadataModule,
        DatabaseModule,
        LanesModule,
        MetricsModule,
        EventsModule,
        AuditModule,
        RateLimitModule,
        IdempotencyModule,
        AuthModule,
        ApiKeysModule,
        AttributesModule,
        ContactsModule,
        ContactMergesModule,
        ConversationsApiModule,
        SearchModule,
        SavedViewsModule,
        MessagesModule,
        CannedResponsesModule,
        TranscriptsModule,
        ChannelsModule,
        MessageTemplatesModule,
        InboundModule,
        MediaModule,
        AgentsApiModule,
        TeamsApiModule,
        SettingsModule,
        BusinessHoursModule,
        FlowsModule,
        AutomationRulesModule,
        AutoRepliesModule,
        SlaPoliciesModule,
        ServiceLevelsModule,
        CsatModule,
        WebhooksModule,
        PrivacyModule,
        EventFeedModule,
        AnalyticsModule,
        HealthModule,
        SeedModule,
      ],
      // Global guards run in this order: who is calling, how often, may they, and did this request run already.
      providers: [
        { provide: APP_GUARD, useClass: AuthenticationGuard },
        { provide: APP_GUARD, useExisting: RateLimitGuard },
        { provide: APP_GUARD, useClass: PermissionsGuard },
        { provide: APP_GUARD, useExisting: IdempotencyGuard },
      ],
    };
  }
}
