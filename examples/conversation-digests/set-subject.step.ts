import { Injectable } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';
import { ConversationsService, FlowStepDefinition, FlowStepDto, HandlesFlowStep, type FlowStepContext, type FlowStepHandler } from '../../src/extension-points.js';

/** A flow step type of this example: `{ "type": "set_subject", "subject": "..." }` sets the conversation's subject. */
@FlowStepDefinition('set_subject')
export class SetSubjectStepDto extends FlowStepDto {
  @ApiProperty({ enum: ['set_subject'] })
  override readonly type = 'set_subject' as const;

  // Outside src/, the Swagger CLI plugin's metadata does not cover this class: its schema is stated here.
  @ApiProperty({ minLength: 1, maxLength: 500, example: 'Refund request' })
  @IsString()
  @Length(1, 500)
  subject: string;
}

/** Runs `set_subject` through the conversations' own service (their rules, their events). Setting it again is the same. */
@Injectable()
@HandlesFlowStep('set_subject')
export class SetSubjectStep implements FlowStepHandler<SetSubjectStepDto> {
  constructor(private readonly conversations: ConversationsService) {}

  async perform(context: FlowStepContext, step: SetSubjectStepDto): Promise<void> {
    await this.conversations.update(context.companyId, context.conversationId, { subject: step.subject });
  }
}
