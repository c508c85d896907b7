import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsIn, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { ROLES, type Role } from '../../auth/auth-principal.js';
import { AGENT_STATUSES, type AgentStatus } from '../agent.schema.js';

export class CreateAgentDto {
  @ApiProperty({ example: 'Grace Hopper', minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiProperty({ example: 'grace@acme.example', maxLength: 320, description: 'Unique within the company' })
  @IsEmail()
  @MaxLength(320)
  email: string;

  @ApiPropertyOptional({ enum: ROLES, default: 'agent' })
  @IsOptional()
  @IsIn(ROLES)
  role?: Role;

  @ApiPropertyOptional({ enum: AGENT_STATUSES, default: 'offline' })
  @IsOptional()
  @IsIn(AGENT_STATUSES)
  status?: AgentStatus;

  @ApiPropertyOptional({
    minLength: 8,
    maxLength: 200,
    description: 'Lets the agent log in with its e-mail; an e-mail can log in to one company only',
  })
  @IsOptional()
  @IsString()
  @Length(8, 200)
  password?: string;
}
