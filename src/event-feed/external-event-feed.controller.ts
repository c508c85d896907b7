import { Controller, Get, Headers, Query, Req, Res, VERSION_NEUTRAL } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { ApiKeyPrincipal, ApiKeyScope } from '../auth/auth-principal.js';
import { CredentialRecheck } from '../auth/credential-recheck.js';
import { ApiKeyAuth } from '../auth/decorators/api-key-auth.decorator.js';
import { CurrentApiKey } from '../auth/decorators/principal.decorator.js';
import { RequireScopes } from '../auth/decorators/require-scopes.decorator.js';
import { ApiEnvelopeErrorResponses } from '../common/errors/api-error-responses.js';
import { ListEventsQueryDto, StreamEventsQueryDto } from './dto/event-feed-query.dto.js';
import { ApiEventStream, ApiEventTypesQuery, LIST_DOC, STREAM_DOC } from './event-feed-docs.js';
import { EventFeed } from './event-feed.service.js';
import { EventStreams } from './event-streams.service.js';
import { ExternalEventPageView, ExternalEventView } from './event.view.js';

const CHANNEL_SCOPE_DOC =
  '**Channel-scoped keys.** A key limited to channels (`channels` on the key) gets only the events of conversations ' +
  'on them; the cursor still moves past the others, and a page is short only at the end of the log.';

/** The scope of both routes, which an open stream's key must keep. */
const EVENTS_SCOPE: ApiKeyScope = 'events:read';

/** Interface B: the same feed, under Interface B's event names, the list in the envelope. */
@ApiTags('Interface B: events')
@ApiKeyAuth()
@RequireScopes(EVENTS_SCOPE)
@ApiEnvelopeErrorResponses(400, 401, 410, 429, 500)
@Controller({ path: 'api/external/events', version: VERSION_NEUTRAL })
export class ExternalEventFeedController {
  constructor(
    private readonly feed: EventFeed,
    private readonly streams: EventStreams,
    private readonly credentials: CredentialRecheck,
  ) {}

  @Get()
  @ApiEventTypesQuery()
  @ApiOperation({ summary: "The workspace's events, oldest first, after a cursor", description: `${LIST_DOC}\n\n${CHANNEL_SCOPE_DOC}` })
  @ApiOkResponse({ type: ExternalEventPageView })
  async list(@CurrentApiKey() key: ApiKeyPrincipal, @Query() query: ListEventsQueryDto): Promise<ExternalEventPageView> {
    return { success: true, ...(await this.feed.page(key.companyId, query, ExternalEventView.from, key.channels)) };
  }

  @Get('stream')
  @ApiEventTypesQuery()
  @ApiOperation({
    summary: "The workspace's events as they happen (Server-Sent Events), resumable",
    description: `${STREAM_DOC}\n\n${CHANNEL_SCOPE_DOC}`,
  })
  @ApiEventStream('CHAT_RECEIVED')
  @ApiEnvelopeErrorResponses(503)
  async stream(
    @CurrentApiKey() key: ApiKeyPrincipal,
    @Query() query: StreamEventsQueryDto,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await this.streams.open(
      {
        companyId: key.companyId,
        principal: `key:${key.apiKeyId}`,
        naming: 'external',
        types: query.types,
        cursor: lastEventId || query.after,
        channels: key.channels,
        credential: () => this.credentials.check(req, { scopes: [EVENTS_SCOPE] }),
      },
      res,
    );
  }
}
