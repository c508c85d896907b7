import { IsMongoId } from 'class-validator';

export class ExecuteFlowDto {
  /**
   * A conversation of your company, not closed
   * @example 6650f0c2a1b2c3d4e5f60718
   */
  @IsMongoId()
  conversationId: string;
}
