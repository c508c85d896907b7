import { IsMongoId, IsOptional, IsString, Length } from 'class-validator';

/** Exactly one of `teamId` and `agentId`. */
export class TransferConversationDto {
  /** The team whose queue it goes to (queued, unassigned) */
  @IsOptional()
  @IsMongoId({ message: 'teamId must be a team id' })
  teamId?: string;

  /** The agent it goes to (human, assigned to them) */
  @IsOptional()
  @IsMongoId({ message: 'agentId must be an agent id' })
  agentId?: string;

  /** Becomes a private note on the conversation */
  @IsOptional()
  @IsString()
  @Length(1, 4096)
  note?: string;
}
