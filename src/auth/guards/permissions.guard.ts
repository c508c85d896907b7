import { ForbiddenException, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { CachedReflector } from '../../common/route-metadata.js';
import { ROLES, type ApiKeyScope, type AuthPrincipal, type Role } from '../auth-principal.js';
import { REQUIRED_ROLE, roleRequiredMessage } from '../decorators/require-role.decorator.js';
import { REQUIRED_SCOPES, scopesMissingMessage } from '../decorators/require-scopes.decorator.js';

/** Roles are ordered; a role may do everything the roles before it may. */
export function roleAllows(role: Role, required: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(required);
}

/** What a route requires of its caller beyond authentication (`@RequireRole`, `@RequireScopes`). */
export interface Permission {
  role?: Role;
  scopes?: readonly ApiKeyScope[];
}

/** 403 (ForbiddenException) when the principal lacks the role or a scope. */
export function assertPermitted(principal: AuthPrincipal | undefined, { role, scopes }: Permission): void {
  if (role && !(principal?.kind === 'agent' && roleAllows(principal.role, role))) {
    throw new ForbiddenException(roleRequiredMessage(role));
  }
  const missing = scopes?.filter((scope) => !(principal?.kind === 'api-key' && principal.scopes.includes(scope)));
  if (missing?.length) throw new ForbiddenException(scopesMissingMessage(missing));
}

/** Reads `@RequireRole` and `@RequireScopes` and answers 403 when the authenticated caller lacks them. */
@Injectable()
export class PermissionsGuard implements CanActivate {
  constructor(private readonly reflector: CachedReflector) {}

  canActivate(context: ExecutionContext): boolean {
    const targets = [context.getHandler(), context.getClass()];
    const role = this.reflector.getAllAndOverride<Role | undefined>(REQUIRED_ROLE, targets);
    const scopes = this.reflector.getAllAndOverride<ApiKeyScope[] | undefined>(REQUIRED_SCOPES, targets);
    if (!role && !scopes) return true;
    assertPermitted(context.switchToHttp().getRequest<{ user?: AuthPrincipal }>().user, { role, scopes });
    return true;
  }
}
