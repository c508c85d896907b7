import { Body, Controller, HttpStatus, Post, Res, VERSION_NEUTRAL } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { ApiKeyPrincipal } from '../auth/auth-principal.js';
import { ApiKeyAuth } from '../auth/decorators/api-key-auth.decorator.js';
import { CurrentApiKey } from '../auth/decorators/principal.decorator.js';
import { RequireScopes } from '../auth/decorators/require-scopes.decorator.js';
import { ApiEnvelopeErrorResponses } from '../common/errors/api-error-responses.js';
import { InboundMessageDto } from './dto/inbound-message.dto.js';
import { InboundMessageEnvelope } from './inbound-message.view.js';
import { InboundMessagesService } from './inbound-messages.service.js';

@ApiTags('Interface B: inbound messages')
@ApiKeyAuth()
@RequireScopes('messages:write')
@Controller({ path: 'api/external/messages', version: VERSION_NEUTRAL })
export class InboundMessagesController {
  constructor(private readonly inbound: InboundMessagesService) {}

  @Post()
  @ApiOperation({
    summary: 'Store a message a contact sent on a channel',
    description:
      'Finds the contact by phone, else e-mail, or creates it; finds its open conversation on the channel or ' +
      'opens one in `bot` (`conversation.created`); stores the message (`message.received`). A contact has at ' +
      'most one open conversation per channel; after a close, the next message opens a new conversation. ' +
      'The answer shows the stored message and conversation: the flows the message triggers run after it, ' +
      'from the event log, so their effects (replies, hand-off, tags) are not in it; follow them by webhook.\n\n' +
      '**Retries.** Send the channel’s own message id as `externalId`: a message whose `externalId` is already ' +
      'stored on the channel (per company) answers **200** with that message, its conversation as it stands now ' +
      'and `duplicate: true`, and stores and emits nothing, even when the repeats arrive at the same time.\n\n' +
      '**Media.** A photo, video, voice note or document comes in two steps, as the channels’ own APIs do: upload ' +
      'the file with `POST /api/external/media`, then send this message with its `id` as `mediaId` (and `type`, ' +
      'the file’s kind, and a `caption` if you like; `text` is then optional). Each upload serves one message. ' +
      '400 for a `mediaId` that is not an upload of your company, one a message already carries, or a `type` ' +
      'that is not the file’s; nothing is stored then.\n\n' +
      '**Channels.** A key limited to channels (`channels` on the key) posts only for them: another channel ' +
      '(the default `api` included) answers 403.',
  })
  @ApiCreatedResponse({ type: InboundMessageEnvelope, description: 'Stored (`duplicate: false`)' })
  @ApiOkResponse({ type: InboundMessageEnvelope, description: 'A repeat of a stored externalId (`duplicate: true`): nothing stored' })
  @ApiEnvelopeErrorResponses(400, 401, 409, 429)
  async receive(
    @CurrentApiKey() apiKey: ApiKeyPrincipal,
    @Body() dto: InboundMessageDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<InboundMessageEnvelope> {
    const received = await this.inbound.receive(apiKey.companyId, dto, apiKey.channels);
    response.status(received.duplicate ? HttpStatus.OK : HttpStatus.CREATED);
    return { success: true, data: received };
  }
}
