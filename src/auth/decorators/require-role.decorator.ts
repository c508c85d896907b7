import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiForbiddenResponse } from '@nestjs/swagger';
import type { Role } from '../auth-principal.js';

export const REQUIRED_ROLE = 'auth:role';

/** The least role that may call the route: `agent` < `supervisor` < `admin`. */
export const RequireRole = (role: Role) =>
  applyDecorators(
    SetMetadata(REQUIRED_ROLE, role),
    ApiForbiddenResponse({ description: `Requires the ${role} role or above` }),
  );
