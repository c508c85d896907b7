import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { AuthFailureInterceptor } from '../../common/rate-limit/auth-failure.interceptor.js';

export const COUNTS_AUTH_FAILURES = 'auth:counts-failures';

/**
 * A public route that checks credentials itself (login, register): refused with 429 while the address is
 * over AUTH_FAILURE_LIMIT, and its refusals count as failed authentications.
 */
export const CountsAuthFailures = () => applyDecorators(SetMetadata(COUNTS_AUTH_FAILURES, true), UseInterceptors(AuthFailureInterceptor));
