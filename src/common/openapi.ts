/** Names of the OpenAPI security schemes declared in swagger.ts and referenced by the decorators. */
export const BEARER_SECURITY = 'bearer';
export const API_KEY_SECURITY = 'api-key';
