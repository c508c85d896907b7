import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { RequireRole } from '../auth/decorators/require-role.decorator.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { MAX_ATTRIBUTE_DEFINITIONS_PER_MODEL } from './attribute-definition.schema.js';
import { AttributeDefinitionView, DeletedAttributeDefinitionView } from './attribute-definition.view.js';
import { AttributeDefinitionsService } from './attribute-definitions.service.js';
import { CreateAttributeDefinitionDto } from './dto/create-attribute-definition.dto.js';
import { ListAttributeDefinitionsQueryDto } from './dto/list-attribute-definitions-query.dto.js';
import { UpdateAttributeDefinitionDto } from './dto/update-attribute-definition.dto.js';
import type { AuditOrigin } from '../audit/audit-entry.js';
import { AuditOriginOf } from '../audit/audit-origin.decorator.js';

export class AttributeDefinitionListView {
  data: AttributeDefinitionView[];
}

const VALUES =
  "Values go in a contact's or conversation's `attributes` `{ key: value }`: a key not defined or archived, a value of " +
  'another type or an option not listed answers 400 naming the key. Filters use them as `attributes.<key>` ' +
  '(docs/filters.md).';

@ApiTags('Attribute definitions')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@Controller('attribute-definitions')
export class AttributeDefinitionsController {
  constructor(private readonly definitions: AttributeDefinitionsService) {}

  @Get()
  @ApiOperation({ summary: 'List the attribute definitions, by model and key', description: VALUES })
  @ApiOkResponse({ type: AttributeDefinitionListView })
  async list(@CurrentAgent() agent: AgentPrincipal, @Query() query: ListAttributeDefinitionsQueryDto): Promise<AttributeDefinitionListView> {
    return { data: await this.definitions.list(agent.companyId, query.model) };
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get one attribute definition', description: "A missing, malformed or other company's id answers 404." })
  @ApiOkResponse({ type: AttributeDefinitionView })
  @ApiProblemResponses(notFound('Attribute definition'))
  get(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string): Promise<AttributeDefinitionView> {
    return this.definitions.get(agent.companyId, id);
  }

  @Post()
  @RequireRole('admin')
  @ApiOperation({
    summary: 'Define a custom attribute of contacts or conversations (admin)',
    description:
      `A key your company already defines for the model answers 409; at most ${MAX_ATTRIBUTE_DEFINITIONS_PER_MODEL} per ` +
      `model (400 past that). \`options\` are required for a list and refused for the other types. ${VALUES}`,
  })
  @ApiCreatedResponse({ type: AttributeDefinitionView })
  @ApiProblemResponses(409)
  create(
    @CurrentAgent() agent: AgentPrincipal,
    @Body() dto: CreateAttributeDefinitionDto,
    @AuditOriginOf() origin: AuditOrigin,
  ): Promise<AttributeDefinitionView> {
    return this.definitions.create(agent.companyId, dto, origin);
  }

  @Patch(':id')
  @RequireRole('admin')
  @ApiOperation({
    summary: 'Change an attribute definition (admin)',
    description:
      'Only the fields sent change. `model`, `key` and `type` never change (400). An archived attribute keeps its ' +
      'values, which filters still find, but takes no new one.',
  })
  @ApiOkResponse({ type: AttributeDefinitionView })
  @ApiProblemResponses(notFound('Attribute definition'))
  update(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: UpdateAttributeDefinitionDto,
    @AuditOriginOf() origin: AuditOrigin,
  ): Promise<AttributeDefinitionView> {
    return this.definitions.update(agent.companyId, id, dto, origin);
  }

  @Delete(':id')
  @HttpCode(200)
  @RequireRole('admin')
  @ApiOperation({
    summary: 'Delete an attribute definition and its values everywhere (admin)',
    description: 'Every contact or conversation of your company loses the key before this answers.',
  })
  @ApiOkResponse({ type: DeletedAttributeDefinitionView })
  @ApiProblemResponses(notFound('Attribute definition'))
  remove(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @AuditOriginOf() origin: AuditOrigin,
  ): Promise<DeletedAttributeDefinitionView> {
    return this.definitions.remove(agent.companyId, id, origin);
  }
}
