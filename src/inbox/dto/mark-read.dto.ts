import { IsMongoId } from 'class-validator';
import { IsOmittable } from '../../common/dto-decorators.js';

export class MarkReadDto {
  /**
   * A message of this conversation to mark read up to (itself included); default its newest message
   * @example 6650f0c2a1b2c3d4e5f60721
   */
  @IsOmittable()
  @IsMongoId()
  messageId?: string;
}
