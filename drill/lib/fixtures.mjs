// Companies and credentials created through the API, as an integrator would.
import { randomUUID } from 'node:crypto';

export const PASSWORD = 'correct horse battery staple';

/**
 * Registers a company with its admin; answers `{ companyId, companyName, agentId, agentName, email, token }`.
 * `headers` go with the request (an X-Forwarded-For, for a process that trusts the drill as its proxy).
 */
export async function registerCompany(client, companyName, headers = {}) {
  const tag = randomUUID().slice(0, 8);
  const email = `admin-${tag}@drill.example`;
  const agentName = `${companyName} Admin ${tag}`;
  const body = await client.expect(201, 'POST', '/v1/auth/register', {
    json: { companyName, name: agentName, email, password: PASSWORD },
    headers,
  });
  return { companyId: body.company.id, companyName, agentId: body.agent.id, agentName, email, token: body.accessToken };
}

/** An API key of the company; answers `{ id, key }`. */
export async function createApiKey(client, company, scopes, name = 'Drill connector') {
  const body = await client.expect(201, 'POST', '/v1/api-keys', { token: company.token, json: { name, scopes } });
  return { id: body.id, key: body.key };
}
