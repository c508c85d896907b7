import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { API_KEY_SECURITY, BEARER_SECURITY } from './common/openapi.js';

const DESCRIPTION = `
Parley runs a company's conversations with its customers: a bot answers first, a human agent takes
over, or the conversation waits in a queue, until it is closed.

**Interface A** (\`/v1\`): bearer JWT from \`POST /v1/auth/login\` or \`/v1/auth/register\`.
Errors are RFC 9457 problem details (\`application/problem+json\`) with \`statusCode\`, \`error\`,
\`message\`, \`requestId\` and, for a 400, \`errors: [{ field, message }]\`. Lists answer
\`{ data, nextCursor }\`; pass \`nextCursor\` back to get the next page (\`limit\` 1..100, default 50).
Unknown fields, malformed JSON and \`$\`-operators in bodies or queries answer 400; a malformed or
foreign id in a path answers 404.

**Interface B** (\`/api/external\`): \`x-api-key\` header with scopes (\`webhooks:manage\`,
\`messages:write\`); every answer is \`{ success, data | message | error }\`.

Every response carries \`x-request-id\` (echoed when sent). Rate-limited responses carry
\`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\`, \`X-RateLimit-Reset\`, \`RateLimit-Policy\` and
\`RateLimit\`; a 429 adds \`Retry-After\`. Limits count per agent, per API key, or per address, under a
ceiling per company; expensive routes count more than one (said on each). An address that fails to
authenticate too often (bad token, bad key, wrong password, refused registration) gets 429 on every
authenticating request until the window ends. Every 401 carries \`WWW-Authenticate\`. Answers that
carry a token, key or secret carry \`Cache-Control: no-store\`.
`.trim();

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Parley API')
    .setDescription(DESCRIPTION)
    .setVersion('1.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, BEARER_SECURITY)
    .addApiKey({ type: 'apiKey', in: 'header', name: 'x-api-key' }, API_KEY_SECURITY)
    .build();
  return SwaggerModule.createDocument(app, config);
}

/** Where Swagger UI is served (its assets below it); the OpenAPI JSON is at `${DOCS_PATH}-json`. */
export const DOCS_PATH = '/docs';

/** Swagger UI at /docs and the OpenAPI JSON at /docs-json. */
export function setupSwagger(app: INestApplication): void {
  SwaggerModule.setup(DOCS_PATH.slice(1), app, () => buildOpenApiDocument(app), { jsonDocumentUrl: `${DOCS_PATH.slice(1)}-json` });
}
