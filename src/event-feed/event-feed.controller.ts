import { Controller, Get, Headers, Query, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CredentialRecheck } from '../auth/credential-recheck.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { ApiProblemResponses } from '../common/errors/api-error-responses.js';
import { ListEventsQueryDto, StreamEventsQueryDto } from './dto/event-feed-query.dto.js';
import { ApiEventStream, ApiEventTypesQuery, LIST_DOC, STREAM_DOC } from './event-feed-docs.js';
import { EventFeed } from './event-feed.service.js';
import { EventStreams } from './event-streams.service.js';
import { EventPageView, EventView } from './event.view.js';

/** Interface A: the company's event log, as a list and as a stream (any agent). */
@ApiTags('Events')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 410, 429)
@Controller('events')
export class EventFeedController {
  constructor(
    private readonly feed: EventFeed,
    private readonly streams: EventStreams,
    private readonly credentials: CredentialRecheck,
  ) {}

  @Get()
  @ApiEventTypesQuery()
  @ApiOperation({ summary: "The company's events, oldest first, after a cursor", description: LIST_DOC })
  @ApiOkResponse({ type: EventPageView })
  list(@CurrentAgent() agent: AgentPrincipal, @Query() query: ListEventsQueryDto): Promise<EventPageView> {
    return this.feed.page(agent.companyId, query, EventView.from);
  }

  @Get('stream')
  @ApiEventTypesQuery()
  @ApiOperation({ summary: "The company's events as they happen (Server-Sent Events), resumable", description: STREAM_DOC })
  @ApiEventStream('message.received')
  @ApiProblemResponses(503)
  async stream(
    @CurrentAgent() agent: AgentPrincipal,
    @Query() query: StreamEventsQueryDto,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await this.streams.open(
      {
        companyId: agent.companyId,
        principal: `agent:${agent.agentId}`,
        naming: 'dotted',
        types: query.types,
        cursor: lastEventId || query.after,
        credential: () => this.credentials.check(req),
      },
      res,
    );
  }
}
