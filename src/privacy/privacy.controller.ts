import { Body, Controller, Get, HttpCode, Param, Post, Query, Res, StreamableFile } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { AuditOrigin } from '../audit/audit-entry.js';
import { AuditOriginOf } from '../audit/audit-origin.decorator.js';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { Public } from '../auth/decorators/public.decorator.js';
import { RequireRole } from '../auth/decorators/require-role.decorator.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { ApiPageResponse, type Page } from '../common/pagination/page.js';
import { EraseContactDto, ExportContactDto, ListPrivacyRequestsQueryDto } from './dto/privacy-requests.dto.js';
import { ExportLinks, INVALID_EXPORT_LINK } from './export-links.js';
import { PrivacyRequestView } from './privacy-request.view.js';
import { PrivacyRequestsService } from './privacy-requests.service.js';

@ApiTags('Privacy')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@RequireRole('admin')
@Controller()
export class PrivacyController {
  constructor(private readonly privacy: PrivacyRequestsService) {}

  @Post('contacts/:id/erase')
  @HttpCode(202)
  @ApiOperation({
    summary: "Erase a contact's personal data and message texts everywhere (GDPR article 17)",
    description:
      'Admins only. Carried out in the background after PRIVACY_ERASE_DELAY_HOURS (default 0), cancellable until it ' +
      'starts. Removes name, e-mail, phone, tags, attributes and every text, caption, template variable and file of its ' +
      'conversations (notes included), from every copy: conversations, the event log, webhook deliveries, kept ' +
      'idempotent answers, the search index and finished exports. Conversations keep their metadata. Ends with ' +
      '`contact.erased` and `privacy_request.completed`. 409 under a legal hold; 410 when already erased. ' +
      'An erasure already pending or running for the contact is answered as it is.',
  })
  @ApiAcceptedResponse({ type: PrivacyRequestView })
  @ApiProblemResponses(notFound('Contact'), 409, 410)
  erase(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: EraseContactDto,
    @AuditOriginOf() origin: AuditOrigin,
  ): Promise<PrivacyRequestView> {
    return this.privacy.erase(agent.companyId, id, dto, origin);
  }

  @Post('contacts/:id/export')
  @HttpCode(202)
  @ApiOperation({
    summary: "Export a contact's data as a ZIP (GDPR article 15)",
    description:
      'Admins only. Built in the background: `contact.json`, `conversations.json` (every conversation with its ' +
      'messages; private notes only with `includeNotes`) and `media/<id>-<fileName>` for every file. Once ' +
      '`completed`, `downloadUrl` serves it without credentials for 7 days. 410 when the contact was erased.',
  })
  @ApiAcceptedResponse({ type: PrivacyRequestView })
  @ApiProblemResponses(notFound('Contact'), 410)
  export(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: ExportContactDto,
    @AuditOriginOf() origin: AuditOrigin,
  ): Promise<PrivacyRequestView> {
    return this.privacy.export(agent.companyId, id, dto, origin);
  }

  @Get('privacy-requests')
  @ApiOperation({ summary: 'List privacy requests, newest first', description: 'Admins only.' })
  @ApiPageResponse(PrivacyRequestView)
  list(@CurrentAgent() agent: AgentPrincipal, @Query() query: ListPrivacyRequestsQueryDto): Promise<Page<PrivacyRequestView>> {
    return this.privacy.list(agent.companyId, query);
  }

  @Get('privacy-requests/:id')
  @ApiOperation({ summary: 'Get a privacy request', description: 'Admins only. A completed export shows its `downloadUrl`.' })
  @ApiOkResponse({ type: PrivacyRequestView })
  @ApiProblemResponses(notFound('Privacy request'))
  get(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string): Promise<PrivacyRequestView> {
    return this.privacy.get(agent.companyId, id);
  }

  @Post('privacy-requests/:id/cancel')
  @HttpCode(200)
  @ApiOperation({ summary: 'Cancel a pending privacy request', description: 'Admins only. 409 once it has started or finished.' })
  @ApiOkResponse({ type: PrivacyRequestView })
  @ApiProblemResponses(notFound('Privacy request'), 409)
  cancel(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @AuditOriginOf() origin: AuditOrigin): Promise<PrivacyRequestView> {
    return this.privacy.cancel(agent.companyId, id, origin);
  }
}

/** Finished exports served through their signed links, which need no credentials (like signed media links). */
@ApiTags('Privacy')
@Public()
@Controller()
export class SignedExportController {
  constructor(
    private readonly privacy: PrivacyRequestsService,
    private readonly links: ExportLinks,
  ) {}

  @Get('privacy-exports/:token')
  @ApiParam({ name: 'token', description: 'The last part of a `downloadUrl`' })
  @ApiProduces('application/zip')
  @ApiOperation({
    summary: 'Download an export through its signed link (no credentials)',
    description: 'The `downloadUrl` of a completed export, valid 7 days. A changed link answers 403, an expired one 410.',
  })
  @ApiOkResponse({
    description: 'The ZIP file',
    content: { 'application/zip': { schema: { type: 'string', format: 'binary' } } },
    headers: { 'Content-Disposition': { description: 'attachment, with the file name', schema: { type: 'string' } } },
  })
  @ApiProblemResponses([403, INVALID_EXPORT_LINK], 404, 410)
  async download(@Param('token') token: string, @Res({ passthrough: true }) response: Response): Promise<StreamableFile> {
    const { companyId, requestId } = this.links.verify(token);
    const file = await this.privacy.download(companyId, requestId);
    response.setHeader('Cache-Control', 'private, no-store');
    response.setHeader('Referrer-Policy', 'no-referrer');
    return new StreamableFile(file.stream, { type: 'application/zip', length: file.length, disposition: `attachment; filename="${file.fileName}"` });
  }
}
