export const ROLES = ['agent', 'supervisor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export const API_KEY_SCOPES = ['webhooks:manage', 'messages:write', 'events:read', 'media:read', 'templates:manage'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** An agent authenticated by a bearer token (Interface A). */
export interface AgentPrincipal {
  readonly kind: 'agent';
  readonly agentId: string;
  readonly companyId: string;
  readonly role: Role;
}

/** A caller authenticated by an API key (Interface B). */
export interface ApiKeyPrincipal {
  readonly kind: 'api-key';
  readonly apiKeyId: string;
  readonly companyId: string;
  readonly scopes: readonly ApiKeyScope[];
  /** The channels the key is limited to (contract section 13); null: every channel. */
  readonly channels: readonly string[] | null;
}

/** What the authentication guard puts on `request.user`; the company id comes only from here. */
export type AuthPrincipal = AgentPrincipal | ApiKeyPrincipal;
