import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiSecurity } from '@nestjs/swagger';
import { API_KEY_SECURITY } from '../../common/openapi.js';

export const USES_API_KEY = 'auth:api-key';

/**
 * Interface B: the caller is authenticated by the `x-api-key` header instead of a bearer token. Its 401 is documented
 * with the controller's other errors (`@ApiEnvelopeErrorResponses(401, ...)`).
 */
export const ApiKeyAuth = () => applyDecorators(SetMetadata(USES_API_KEY, true), ApiSecurity(API_KEY_SECURITY));
