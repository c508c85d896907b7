import { Injectable } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsMongoId } from 'class-validator';
import { FlowStepDto } from '../flows/dto/flow-steps.dto.js';
import { FlowStepDefinition } from '../flows/steps/flow-step-definition.decorator.js';
import { HandlesFlowStep, type FlowStepContext, type FlowStepHandler } from '../flows/steps/flow-step-handlers.js';
import { ConversationTransfers } from './conversation-transfers.js';

/** `{ "type": "assign_team", "teamId": "..." }`: moves the conversation to that team's queue, as a transfer does. */
@FlowStepDefinition('assign_team')
export class AssignTeamStepDto extends FlowStepDto {
  @ApiProperty({ enum: ['assign_team'] })
  override readonly type = 'assign_team' as const;

  /** A team of the company (a missing one fails the step) @example 6650f0c2a1b2c3d4e5f60740 */
  @IsMongoId()
  teamId: string;
}

/** Runs `assign_team` through ConversationTransfers.toTeam, the code the transfer route and the rule action use. */
@Injectable()
@HandlesFlowStep('assign_team')
export class AssignTeamStep implements FlowStepHandler<AssignTeamStepDto> {
  constructor(private readonly transfers: ConversationTransfers) {}

  async perform(context: FlowStepContext, step: AssignTeamStepDto): Promise<void> {
    await this.transfers.toTeam(context.companyId, context.conversationId, step.teamId, { kind: 'flow', id: context.flowId });
  }
}
