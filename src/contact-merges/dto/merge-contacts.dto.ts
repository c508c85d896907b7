import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsMongoId } from 'class-validator';

/** At most this many contacts merge into one at once (contract section 22). */
export const MAX_MERGE_SOURCES = 10;

export class MergeContactsDto {
  /** The contact that stays: it keeps its values and takes the sources' conversations. @example 6650f0c2a1b2c3d4e5f60719 */
  @IsMongoId({ message: 'targetId must be a contact id' })
  targetId: string;

  /** The contacts merged into the target, in order: an empty field of the target is filled from the first that has it */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_MERGE_SOURCES)
  @ArrayUnique({ message: 'sourceIds must not repeat an id' })
  @IsMongoId({ each: true, message: 'each of sourceIds must be a contact id' })
  @ApiProperty({ type: [String], minItems: 1, maxItems: MAX_MERGE_SOURCES, uniqueItems: true, example: ['6650f0c2a1b2c3d4e5f6071a'] })
  sourceIds: string[];
}
