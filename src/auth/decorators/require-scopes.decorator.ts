import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiForbiddenResponse } from '@nestjs/swagger';
import type { ApiKeyScope } from '../auth-principal.js';

export const REQUIRED_SCOPES = 'auth:scopes';

/** Every listed scope must be held by the API key. */
export const RequireScopes = (...scopes: ApiKeyScope[]) =>
  applyDecorators(
    SetMetadata(REQUIRED_SCOPES, scopes),
    ApiForbiddenResponse({ description: `The API key lacks the scope ${scopes.join(', ')}` }),
  );
