import { Body, Controller, Header, HttpCode, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiProblemResponses } from '../common/errors/api-error-responses.js';
import { RateLimitWeight } from '../common/rate-limit/rate-limit.guard.js';
import { AuthService } from './auth.service.js';
import { CountsAuthFailures } from './decorators/counts-auth-failures.decorator.js';
import { Public } from './decorators/public.decorator.js';
import { LoginResponseDto, RegisterResponseDto } from './dto/auth-response.dto.js';
import { LoginDto } from './dto/login.dto.js';
import { RegisterDto } from './dto/register.dto.js';
import type { AuditOrigin } from '../audit/audit-entry.js';
import { AuditOriginOf } from '../audit/audit-origin.decorator.js';

/** What one call of each route counts against the rate limits: both hash a password (scrypt, ~0.3 s of CPU). */
export const LOGIN_WEIGHT = 5;
export const REGISTER_WEIGHT = 10;

@ApiTags('Auth')
@Public()
@CountsAuthFailures()
@Controller('auth')
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Post('register')
  @Header('Cache-Control', 'no-store')
  @RateLimitWeight(REGISTER_WEIGHT)
  @ApiOperation({
    summary: 'Create a company, its settings and an admin agent; answers a bearer token',
    description:
      'Open to anyone unless the server runs with `ALLOW_REGISTRATION=false` (then 403; the default in production). ' +
      'An e-mail that can already log in answers a 409 that does not say so ("Registration could not be completed ' +
      'with these details"), in the time a new one takes. Refusals count as failed logins of the address and e-mail. ' +
      `Counts ${REGISTER_WEIGHT} requests against the rate limit. The token is used as \`Authorization: Bearer <accessToken>\` ` +
      'until `expiresIn` seconds have passed.',
  })
  @ApiCreatedResponse({ type: RegisterResponseDto })
  @ApiProblemResponses(400, [403, 'Registration is disabled on this server'], 409, 429)
  register(@Body() dto: RegisterDto): Promise<RegisterResponseDto> {
    return this.auth.register(dto);
  }

  @Post('login')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @RateLimitWeight(LOGIN_WEIGHT)
  @ApiOperation({
    summary: 'Exchange an agent e-mail and password for a bearer token',
    description:
      'A wrong e-mail or password, or a deactivated agent, answers 401 with the same message, so that it does not ' +
      'tell which. A 401 counts as a failed login of the client address and that e-mail: after AUTH_FAILURE_LIMIT of them in a ' +
      'rate-limit window, the e-mail is refused from that address (429, even with its right password) until the window ends, ' +
      'while other e-mails from the address still log in. ' +
      `Counts ${LOGIN_WEIGHT} requests against the rate limit.`,
  })
  @ApiOkResponse({ type: LoginResponseDto })
  @ApiProblemResponses(400, [401, 'Invalid e-mail or password'], 429)
  login(@Body() dto: LoginDto, @AuditOriginOf() origin: AuditOrigin): Promise<LoginResponseDto> {
    return this.auth.login(dto, origin);
  }
}
