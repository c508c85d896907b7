import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UseInterceptors } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { RequireRole } from '../auth/decorators/require-role.decorator.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { ApiPageResponse, type Page } from '../common/pagination/page.js';
import { CanonicalContactLink, MERGED_CONTACT } from './contact-merged.exception.js';
import { ContactView, DeletedContactView, DuplicateCandidatesPage } from './contact.view.js';
import { ListDuplicatesQueryDto } from './dto/list-duplicates-query.dto.js';
import { ContactDuplicates } from './contact-duplicates.js';
import { ContactsService, LEGAL_HOLD_NEEDS_ADMIN } from './contacts.service.js';
import { CreateContactDto } from './dto/create-contact.dto.js';
import { ListContactsQueryDto } from './dto/list-contacts-query.dto.js';
import { UpdateContactDto } from './dto/update-contact.dto.js';
import type { AuditOrigin } from '../audit/audit-entry.js';
import { AuditOriginOf } from '../audit/audit-origin.decorator.js';

@ApiTags('Contacts')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@UseInterceptors(CanonicalContactLink)
@Controller('contacts')
export class ContactsController {
  constructor(
    private readonly contacts: ContactsService,
    private readonly duplicateContacts: ContactDuplicates,
  ) {}

  @Get()
  @ApiOperation({
    summary: 'List contacts, newest first, optionally searched and filtered by tags',
    description:
      '`search` matches name, e-mail or phone anywhere; `tags` keeps contacts having all the tags given. Pass ' +
      '`nextCursor` back as `cursor`.',
  })
  @ApiPageResponse(ContactView)
  list(@CurrentAgent() agent: AgentPrincipal, @Query() query: ListContactsQueryDto): Promise<Page<ContactView>> {
    return this.contacts.list(agent.companyId, query);
  }

  @Post()
  @ApiOperation({
    summary: 'Create a contact',
    description: 'At least one of name, email or phone. E-mail and phone are unique within the company (409).',
  })
  @ApiCreatedResponse({ type: ContactView })
  @ApiProblemResponses(409)
  create(@CurrentAgent() agent: AgentPrincipal, @Body() dto: CreateContactDto): Promise<ContactView> {
    return this.contacts.create(agent.companyId, dto);
  }

  @Get('duplicates')
  @ApiOperation({
    summary: 'List duplicate candidates: contacts that may be one person',
    description:
      'Contacts whose names are equal ignoring case, accents and spaces and whose e-mails and phones do not ' +
      'conflict (present on both and different), grouped, for a person to review and merge. In name order; pass ' +
      '`nextCursor` back as `cursor`.',
  })
  @ApiOkResponse({ type: DuplicateCandidatesPage })
  duplicates(@CurrentAgent() agent: AgentPrincipal, @Query() query: ListDuplicatesQueryDto): Promise<DuplicateCandidatesPage> {
    return this.duplicateContacts.page(agent.companyId, query);
  }

  @Get(':id')
  @ApiOperation({
    summary: 'Get one contact',
    description: "A missing, malformed or other company's id answers 404; a merged one 410, naming the contact it was merged into.",
  })
  @ApiOkResponse({ type: ContactView })
  @ApiProblemResponses(notFound('Contact'), MERGED_CONTACT)
  get(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string): Promise<ContactView> {
    return this.contacts.get(agent.companyId, id);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Update a contact',
    description:
      'Only the fields sent change. null clears name, email or phone, but one of them must remain. ' +
      'tags and attributes replace the whole list or object. E-mail and phone stay unique within the company (409).',
  })
  @ApiOkResponse({ type: ContactView })
  @ApiProblemResponses([403, LEGAL_HOLD_NEEDS_ADMIN], notFound('Contact'), 409, MERGED_CONTACT)
  update(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: UpdateContactDto,
    @AuditOriginOf() origin: AuditOrigin,
  ): Promise<ContactView> {
    return this.contacts.update(agent.companyId, id, dto, { role: agent.role, origin });
  }

  @Delete(':id')
  @HttpCode(200)
  @RequireRole('supervisor')
  @ApiOperation({
    summary: 'Delete a contact (supervisor or admin)',
    description:
      'Deletes the contact record only. Its conversations and their messages are kept as history and still carry ' +
      'its contactId; a later inbound message from the same phone or e-mail creates a new contact and conversation.',
  })
  @ApiOkResponse({ type: DeletedContactView })
  @ApiProblemResponses(notFound('Contact'), MERGED_CONTACT)
  remove(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string): Promise<DeletedContactView> {
    return this.contacts.remove(agent.companyId, id);
  }
}
