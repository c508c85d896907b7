import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { AgentPrincipal, ApiKeyPrincipal, AuthPrincipal } from '../auth-principal.js';

function principalOf(context: ExecutionContext): AuthPrincipal {
  return context.switchToHttp().getRequest<{ user: AuthPrincipal }>().user;
}

/** The authenticated agent of an Interface A route. */
export const CurrentAgent = createParamDecorator(
  (_: unknown, context: ExecutionContext) => principalOf(context) as AgentPrincipal,
);

/** The authenticated API key of an Interface B route. */
export const CurrentApiKey = createParamDecorator(
  (_: unknown, context: ExecutionContext) => principalOf(context) as ApiKeyPrincipal,
);
