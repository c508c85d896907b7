import { ApiProperty } from '@nestjs/swagger';
import { AgentView } from '../../agents/agent.view.js';
import { CompanyView } from '../../companies/company.view.js';

export class LoginResponseDto {
  @ApiProperty({ example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…' }) accessToken: string;
  @ApiProperty({ example: 'Bearer' }) tokenType: 'Bearer';
  @ApiProperty({ example: 3600, description: 'Seconds until the token expires' }) expiresIn: number;
  @ApiProperty({ type: AgentView }) agent: AgentView;
}

export class RegisterResponseDto extends LoginResponseDto {
  @ApiProperty({ type: CompanyView }) company: CompanyView;
}
