import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiEnvelopeErrorResponses } from '../../common/errors/api-error-responses.js';
import type { ApiKeyScope } from '../auth-principal.js';

export const REQUIRED_SCOPES = 'auth:scopes';

/** What an API key without `missing` is answered (403), by PermissionsGuard and in the route's documentation alike. */
export const scopesMissingMessage = (missing: readonly ApiKeyScope[]) => `The API key lacks the scope ${missing.join(', ')}`;

/** Every listed scope must be held by the API key. Documents the route's 403. */
export const RequireScopes = (...scopes: ApiKeyScope[]) =>
  applyDecorators(SetMetadata(REQUIRED_SCOPES, scopes), ApiEnvelopeErrorResponses([403, scopesMissingMessage(scopes)]));
