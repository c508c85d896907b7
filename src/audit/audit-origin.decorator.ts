import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import type { AuthPrincipal } from '../auth/auth-principal.js';
import { requestIdOf } from '../common/request-id.js';
import { originOf, type AuditOrigin } from './audit-entry.js';

/** Who is calling and from where, for the audit entry of the change the route makes (a route's parameter). */
export const AuditOriginOf = createParamDecorator((_: unknown, context: ExecutionContext): AuditOrigin => {
  const req = context.switchToHttp().getRequest<Request & { user?: AuthPrincipal }>();
  return originOf(req.user, requestIdOf(req), req.ip ?? null);
});
