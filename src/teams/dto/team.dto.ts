import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsMongoId,
  IsOptional,
  IsString,
  Length,
  Max,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { IsOmittable } from '../../common/dto-decorators.js';
import {
  MAX_MAX_WAIT_SECONDS,
  MAX_TEAM_MEMBERS,
  MIN_MAX_WAIT_SECONDS,
  OVERFLOW_ACTIONS,
  TEAM_STRATEGIES,
  type OverflowAction,
  type TeamStrategy,
} from '../team.schema.js';

export class TeamOverflowDto {
  @IsIn(OVERFLOW_ACTIONS)
  action: OverflowAction;

  /** Required for `team`: another team of the company */
  @ValidateIf((overflow: TeamOverflowDto) => overflow.action === 'team' || overflow.teamId !== undefined)
  @IsMongoId({ message: 'overflow.teamId must be a team id (required when action is team)' })
  teamId?: string;

  /** Required for `message`: the text the bot sends once */
  @ValidateIf((overflow: TeamOverflowDto) => overflow.action === 'message' || overflow.text !== undefined)
  @IsString()
  @Length(1, 4096)
  text?: string;
}

/** The fields of a team, on create and on PATCH. */
export class TeamOptionsDto {
  /** Active agents of your company */
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(MAX_TEAM_MEMBERS)
  @IsMongoId({ each: true })
  memberIds?: string[];

  @IsOmittable()
  @IsIn(TEAM_STRATEGIES)
  strategy?: TeamStrategy;

  /** Seconds before `overflow` applies to a conversation still waiting; null: no limit */
  @IsOptional()
  @IsInt()
  @Min(MIN_MAX_WAIT_SECONDS)
  @Max(MAX_MAX_WAIT_SECONDS)
  maxWaitSeconds?: number | null;

  @IsOptional()
  @ValidateNested()
  @Type(() => TeamOverflowDto)
  overflow?: TeamOverflowDto | null;

  @IsOmittable()
  @IsBoolean()
  isActive?: boolean;
}

export class CreateTeamDto extends TeamOptionsDto {
  /** Unique in your company @example Billing */
  @IsString()
  @Length(1, 100)
  name: string;
}

export class UpdateTeamDto extends TeamOptionsDto {
  /** @example Billing */
  @IsOmittable()
  @IsString()
  @Length(1, 100)
  name?: string;
}
