import { Body, Controller, HttpCode, Param, Post, VERSION_NEUTRAL } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { ApiKeyPrincipal } from '../auth/auth-principal.js';
import { ApiKeyAuth } from '../auth/decorators/api-key-auth.decorator.js';
import { CurrentApiKey } from '../auth/decorators/principal.decorator.js';
import { RequireScopes } from '../auth/decorators/require-scopes.decorator.js';
import { ApiEnvelopeErrorResponses, notFound } from '../common/errors/api-error-responses.js';
import { ConversationView } from '../conversations/conversation.view.js';
import { ApiDataEnvelope, envelope, type DataEnvelope } from '../webhooks/dto/envelope.js';
import { CsatService } from './csat.service.js';
import { SubmitCsatDto } from './dto/submit-csat.dto.js';

/** Interface B: the connector passes on the contact's answer to the satisfaction survey. */
@ApiTags('Interface B: satisfaction ratings')
@ApiKeyAuth()
@RequireScopes('messages:write')
@Controller({ path: 'api/external/conversations', version: VERSION_NEUTRAL })
export class CsatController {
  constructor(private readonly csat: CsatService) {}

  @Post(':id/csat')
  @HttpCode(200)
  @ApiOperation({
    summary: "Store the contact's satisfaction rating of a closed conversation",
    description:
      'With CSAT enabled in the settings, closing a conversation makes the bot send the survey (`csat.message`, a ' +
      '`message.sent` like any other) and the conversation awaits a rating for 7 days. This stores it, once: ' +
      '`rating` 1 to 5, an optional `comment`; emits `csat.submitted` (Interface B `CSAT_SUBMITTED`) with ' +
      '`{ conversation, rating, comment }` and answers the conversation with `csat`. A conversation rated already → ' +
      '409; one not awaiting a rating (open, closed without a survey, or after the 7 days) → 400; a rating out of ' +
      "range → 400 naming `rating`; an unknown id or another company's → 404; a conversation on a channel the key is " +
      'not limited to → 403.',
  })
  @ApiParam({ name: 'id', example: '6650f0c2a1b2c3d4e5f60718', description: 'The conversation the survey was sent on' })
  @ApiDataEnvelope(200, ConversationView, { description: 'The conversation with its rating' })
  @ApiEnvelopeErrorResponses(
    400,
    401,
    [403, 'The API key lacks the scope messages:write'],
    notFound('Conversation'),
    409,
    429,
  )
  async submit(@CurrentApiKey() apiKey: ApiKeyPrincipal, @Param('id') id: string, @Body() dto: SubmitCsatDto): Promise<DataEnvelope<ConversationView>> {
    return envelope(await this.csat.submit(apiKey.companyId, id, dto, apiKey.channels));
  }
}
