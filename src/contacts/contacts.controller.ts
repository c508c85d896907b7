import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { RequireRole } from '../auth/decorators/require-role.decorator.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { ApiPageResponse, type Page } from '../common/pagination/page.js';
import { ContactView, DeletedContactView } from './contact.view.js';
import { ContactsService } from './contacts.service.js';
import { CreateContactDto } from './dto/create-contact.dto.js';
import { ListContactsQueryDto } from './dto/list-contacts-query.dto.js';
import { UpdateContactDto } from './dto/update-contact.dto.js';
import type { AuditOrigin } from '../audit/audit-entry.js';
import { AuditOriginOf } from '../audit/audit-origin.decorator.js';

@ApiTags('Contacts')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@Controller('contacts')
export class ContactsController {
  constructor(private readonly contacts: ContactsService) {}

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

  @Get(':id')
  @ApiOperation({
    summary: 'Get one contact',
    description: "A missing, malformed or other company's id answers 404.",
  })
  @ApiOkResponse({ type: ContactView })
  @ApiProblemResponses(notFound('Contact'))
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
  @ApiProblemResponses(notFound('Contact'), 409)
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
  @ApiProblemResponses(notFound('Contact'))
  remove(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string): Promise<DeletedContactView> {
    return this.contacts.remove(agent.companyId, id);
  }
}
