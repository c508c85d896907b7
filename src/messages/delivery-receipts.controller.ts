import { Body, Controller, HttpCode, Param, Post, VERSION_NEUTRAL } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { ApiKeyPrincipal } from '../auth/auth-principal.js';
import { ApiKeyAuth } from '../auth/decorators/api-key-auth.decorator.js';
import { CurrentApiKey } from '../auth/decorators/principal.decorator.js';
import { RequireScopes } from '../auth/decorators/require-scopes.decorator.js';
import { ApiEnvelopeErrorResponses, notFound } from '../common/errors/api-error-responses.js';
import { ApiDataEnvelope, envelope, type DataEnvelope } from '../webhooks/dto/envelope.js';
import { DeliveryReceiptsService } from './delivery-receipts.service.js';
import { DeliveryReportDto } from './dto/delivery-report.dto.js';
import { MessageView } from './message.view.js';

const MESSAGE_ID_EXAMPLE = '6650f0c2a1b2c3d4e5f60721';

/** Interface B: a channel connector reports what became of the outbound messages it relayed. */
@ApiTags('Interface B: delivery receipts')
@ApiKeyAuth()
@RequireScopes('messages:write')
@Controller({ path: 'api/external/messages', version: VERSION_NEUTRAL })
export class DeliveryReceiptsController {
  constructor(private readonly receipts: DeliveryReceiptsService) {}

  @Post(':id/status')
  @HttpCode(200)
  @ApiOperation({
    summary: "Report an outbound message's delivery status (a delivery receipt)",
    description:
      'Moves `delivery.status` forward only, along pending → sent → delivered → read (steps may be skipped); ' +
      '`failed` only from pending or sent. Each forward move emits `message.status_changed` (Interface B ' +
      '`CHAT_STATUS_CHANGED`) with `{ message, previousStatus }`. A report that does not move it forward (late, ' +
      'repeated, anything after `read` or `failed`) answers 200 with the message unchanged and emits nothing, so ' +
      'reports may be retried and may arrive out of order. Concurrent reports apply each move once. `externalId` ' +
      'is kept on `delivery.externalId`; `error` only with `failed`. An inbound message, an unknown id or ' +
      "another company's message → 404. A key limited to channels reports only on messages of conversations on them " +
      '(403 for another).',
  })
  @ApiParam({ name: 'id', example: MESSAGE_ID_EXAMPLE, description: 'The outbound message, as Parley gave it to the connector' })
  @ApiDataEnvelope(200, MessageView, { description: 'The message with its delivery as it stands after the report' })
  @ApiEnvelopeErrorResponses(400, 401, notFound('Message', MESSAGE_ID_EXAMPLE), 429)
  async report(
    @CurrentApiKey() apiKey: ApiKeyPrincipal,
    @Param('id') id: string,
    @Body() dto: DeliveryReportDto,
  ): Promise<DataEnvelope<MessageView>> {
    return envelope(await this.receipts.report(apiKey.companyId, id, dto, apiKey.channels));
  }
}
