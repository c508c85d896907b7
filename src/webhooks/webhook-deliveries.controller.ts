import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { RequireRole } from '../auth/decorators/require-role.decorator.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { ApiPageResponse, mapPage, type Page } from '../common/pagination/page.js';
import { ListDeliveriesQueryDto, RecoverDeliveriesDto, RecoveredDeliveriesView } from './dto/delivery-requests.dto.js';
import { DeliveryView } from './webhook-delivery.view.js';
import { WebhookDeliveriesService } from './webhook-deliveries.service.js';

const WEBHOOK_ID_EXAMPLE = 'wh_6650f0c2a1b2c3d4e5f60718';

@ApiTags('Webhooks')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, notFound('Webhook', WEBHOOK_ID_EXAMPLE), 429)
@ApiParam({ name: 'id', example: WEBHOOK_ID_EXAMPLE })
@RequireRole('admin')
@Controller('webhooks/:id')
export class WebhookDeliveriesController {
  constructor(private readonly deliveries: WebhookDeliveriesService) {}

  @Get('deliveries')
  @ApiOperation({
    summary: "A webhook's deliveries, newest first, each with its attempts (status, response code, duration, error)",
    description: 'Admins only. Each delivery keeps its latest 50 attempts; filter by `status` to find failed ones.',
  })
  @ApiPageResponse(DeliveryView)
  async list(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @Query() query: ListDeliveriesQueryDto): Promise<Page<DeliveryView>> {
    const page = await this.deliveries.page(agent.companyId, id, query);
    return mapPage(page, DeliveryView.from);
  }

  @Post('deliveries/:deliveryId/retry')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Redeliver one delivery now, with a fresh round of retries',
    description: 'Any status. The redelivery keeps its id, so receivers see the same webhook-id. A paused webhook delivers it on resume.',
  })
  @ApiParam({ name: 'deliveryId', example: 'dlv_6650f0c2a1b2c3d4e5f60799' })
  @ApiAcceptedResponse({ type: DeliveryView, description: 'Queued' })
  async retry(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Param('deliveryId') deliveryId: string,
  ): Promise<DeliveryView> {
    return DeliveryView.from(await this.deliveries.retry(agent.companyId, id, deliveryId));
  }

  @Post('recover')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Queue again every failed delivery created since a time',
    description: 'Admins only. Each is queued with a fresh round of retries and its same `webhook-id`, in event order.',
  })
  @ApiAcceptedResponse({ type: RecoveredDeliveriesView, description: 'How many were queued' })
  async recover(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: RecoverDeliveriesDto,
  ): Promise<RecoveredDeliveriesView> {
    return { requeued: await this.deliveries.recover(agent.companyId, id, new Date(dto.since)) };
  }
}
