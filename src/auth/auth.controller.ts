import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiProblemResponses } from '../common/errors/api-error-responses.js';
import { AuthService } from './auth.service.js';
import { Public } from './decorators/public.decorator.js';
import { LoginResponseDto, RegisterResponseDto } from './dto/auth-response.dto.js';
import { LoginDto } from './dto/login.dto.js';
import { RegisterDto } from './dto/register.dto.js';

@ApiTags('Auth')
@Public()
@Controller('auth')
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Post('register')
  @ApiOperation({
    summary: 'Create a company, its settings and an admin agent; answers a bearer token',
    description:
      'Open to anyone unless the server runs with `ALLOW_REGISTRATION=false` (then 403). The e-mail must not ' +
      'belong to an agent of any company (409). The token is used as `Authorization: Bearer <accessToken>` until ' +
      '`expiresIn` seconds have passed.',
  })
  @ApiCreatedResponse({ type: RegisterResponseDto })
  @ApiProblemResponses(400, 403, 409, 429)
  register(@Body() dto: RegisterDto): Promise<RegisterResponseDto> {
    return this.auth.register(dto);
  }

  @Post('login')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Exchange an agent e-mail and password for a bearer token',
    description:
      'A wrong e-mail or password, or a deactivated agent, answers 401 with the same message, so that it does not ' +
      'tell which.',
  })
  @ApiOkResponse({ type: LoginResponseDto })
  @ApiProblemResponses(400, 401, 429)
  login(@Body() dto: LoginDto): Promise<LoginResponseDto> {
    return this.auth.login(dto);
  }
}
