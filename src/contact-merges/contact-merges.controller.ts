import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { RequireRole } from '../auth/decorators/require-role.decorator.js';
import type { AuditOrigin } from '../audit/audit-entry.js';
import { AuditOriginOf } from '../audit/audit-origin.decorator.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { MERGED_CONTACT } from '../contacts/contact-merged.exception.js';
import { ContactMergeUndoneView, ContactMergeView } from './contact-merge.view.js';
import { ContactMergesService } from './contact-merges.service.js';
import { MergeContactsDto } from './dto/merge-contacts.dto.js';

@ApiTags('Contacts')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@RequireRole('supervisor')
@Controller('contacts')
export class ContactMergesController {
  constructor(private readonly merges: ContactMergesService) {}

  @Post('merge')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Merge contacts into one (supervisor or admin)',
    description:
      'The target keeps its values and fills its empty name, email and phone from the sources in order; tags are ' +
      "united; attributes: the target's win, missing keys come from the sources. The sources' conversations move to " +
      'the target, each keeping `originalContactId`; the sources answer 410 from then on. Emits `contact.merged`. ' +
      '404 for a contact of another company, 410 for a merged one, 409 while a merge of one of them is under way.',
  })
  @ApiOkResponse({ type: ContactMergeView })
  // The example body's target, which names nothing.
  @ApiProblemResponses(notFound('Contact', '6650f0c2a1b2c3d4e5f60719'), 409, MERGED_CONTACT)
  merge(@CurrentAgent() agent: AgentPrincipal, @Body() dto: MergeContactsDto, @AuditOriginOf() origin: AuditOrigin): Promise<ContactMergeView> {
    return this.merges.merge(agent.companyId, agent.agentId, dto, origin);
  }

  @Post('merges/:mergeId/undo')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Undo a contact merge (supervisor or admin)',
    description:
      'Within CONTACT_MERGE_UNDO_DAYS (30) of the merge: each source comes back with its own values and the ' +
      "conversations that were its own; the target's fields the merge filled become empty again; conversations " +
      "opened since stay with the target. 409 after the window, once undone, or when a source's e-mail or phone " +
      'belongs to another contact since. Emits `contact.merge_undone`.',
  })
  @ApiOkResponse({ type: ContactMergeUndoneView })
  @ApiProblemResponses(notFound('Contact merge'), 409)
  undo(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('mergeId') mergeId: string,
    @AuditOriginOf() origin: AuditOrigin,
  ): Promise<ContactMergeUndoneView> {
    return this.merges.undo(agent.companyId, mergeId, origin);
  }
}
