import { IsMongoId } from 'class-validator';

export class AssignConversationDto {
  /**
   * An active agent of your company
   * @example 6650f0c2a1b2c3d4e5f60718
   */
  @IsMongoId()
  agentId: string;
}
