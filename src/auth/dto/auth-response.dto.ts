import { AgentView } from '../../agents/agent.view.js';
import { CompanyView } from '../../companies/company.view.js';

export class LoginResponseDto {
  /** @example eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9… */
  accessToken: string;
  tokenType: 'Bearer';
  /**
   * Seconds until the token expires
   * @example 3600
   */
  expiresIn: number;
  agent: AgentView;
}

export class RegisterResponseDto extends LoginResponseDto {
  company: CompanyView;
}
