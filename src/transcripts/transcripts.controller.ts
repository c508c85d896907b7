import { Controller, Get, Header, Logger, Param, Query, StreamableFile } from '@nestjs/common';
import { ApiBearerAuth, ApiExtraModels, ApiOkResponse, ApiOperation, ApiProduces, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { Readable } from 'node:stream';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { TranscriptQueryDto } from './dto/transcript-query.dto.js';
import { TranscriptView } from './transcript.view.js';
import { TranscriptsService } from './transcripts.service.js';

@ApiTags('Conversations')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, notFound('Conversation'), 429)
@Controller('conversations')
export class TranscriptsController {
  private readonly logger = new Logger(TranscriptsController.name);

  constructor(private readonly transcripts: TranscriptsService) {}

  @Get(':id/transcript')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    summary: "A conversation's transcript, as text or JSON",
    description:
      '`format=text` (default): `text/plain`, one line per message, oldest first: ' +
      '`[YYYY-MM-DD HH:MM] <name> (<contact|agent|bot>): <text or [media file name]>`, times in your company\'s ' +
      'time zone (settings). A media message shows `[file name]` then its caption; a line break inside a message is ' +
      'written `\\n`. `format=json`: `{ conversation, contact, messages }`, each message with its `senderName`. ' +
      'Private notes only with `includePrivate=true` (in text, their text starts with `[private note]`). The ' +
      'transcript is streamed as it is read, however long the conversation.',
  })
  @ApiProduces('text/plain', 'application/json')
  @ApiExtraModels(TranscriptView)
  @ApiOkResponse({
    description: 'The transcript',
    content: {
      'text/plain': {
        schema: { type: 'string' },
        example:
          '[2026-05-01 09:14] Grace Hopper (contact): Where is my order?\n' +
          '[2026-05-01 09:15] Bot (bot): Thanks! An agent will be with you shortly.\n' +
          '[2026-05-01 09:20] Ada Lovelace (agent): It ships today. [receipt.pdf] Your receipt\n',
      },
      'application/json': { schema: { $ref: getSchemaPath(TranscriptView) } },
    },
  })
  async transcript(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @Query() query: TranscriptQueryDto): Promise<StreamableFile> {
    const transcript = await this.transcripts.open(agent.companyId, id, query);
    return new StreamableFile(Readable.from(transcript.chunks), {
      type: transcript.contentType,
      disposition: `inline; filename="${transcript.fileName}"`,
    }).setErrorHandler((error, response) => {
      // The status and part of the body are out: closing the connection tells the client the transcript is incomplete.
      this.logger.error({ err: error, conversationId: id }, 'Transcript failed while streaming');
      response.destroy?.();
    });
  }
}
