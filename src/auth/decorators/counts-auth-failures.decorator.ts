import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { AuthFailureInterceptor } from '../../common/rate-limit/auth-failure.interceptor.js';

export const COUNTS_AUTH_FAILURES = 'auth:counts-failures';

/**
 * A public route that checks an e-mail's credentials itself (login, register): refused with 429 while that
 * e-mail has failed AUTH_FAILURE_LIMIT times from the address, and its refusals count as failures of the
 * address and e-mail (not of the address alone: see AuthFailureLimiter).
 */
export const CountsAuthFailures = () => applyDecorators(SetMetadata(COUNTS_AUTH_FAILURES, true), UseInterceptors(AuthFailureInterceptor));
