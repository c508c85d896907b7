import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiProblemResponses } from '../../common/errors/api-error-responses.js';
import type { Role } from '../auth-principal.js';

export const REQUIRED_ROLE = 'auth:role';

/** What a caller below `role` is answered (403), by PermissionsGuard and in the route's documentation alike. */
export const roleRequiredMessage = (role: Role) => `This action requires the ${role} role`;

/** The least role that may call the route: `agent` < `supervisor` < `admin`. Documents its 403. */
export const RequireRole = (role: Role) =>
  applyDecorators(SetMetadata(REQUIRED_ROLE, role), ApiProblemResponses([403, roleRequiredMessage(role)]));
