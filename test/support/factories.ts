import { randomUUID } from 'node:crypto';
import type TestAgent from 'supertest/lib/agent.js';
import { AgentsRepository } from '../../src/agents/agents.repository.js';
import type { ApiKeyScope, Role } from '../../src/auth/auth-principal.js';
import { PasswordHasher } from '../../src/auth/password-hasher.js';
import type { TestApp } from './test-app.js';

export interface TestCompany {
  companyId: string;
  agentId: string;
  email: string;
  password: string;
  token: string;
  auth: { Authorization: string };
}

export function uniqueEmail(prefix = 'agent'): string {
  return `${prefix}-${randomUUID().slice(0, 8)}@example.test`;
}

/** Registers a company with its admin, through the API. */
export async function registerCompany(http: TestAgent, name = 'Acme'): Promise<TestCompany> {
  const email = uniqueEmail('admin');
  const password = 'correct horse battery staple';
  const response = await http
    .post('/v1/auth/register')
    .send({ companyName: name, name: `${name} Admin`, email, password })
    .expect(201);
  const token = response.body.accessToken as string;
  return {
    companyId: response.body.company.id,
    agentId: response.body.agent.id,
    email,
    password,
    token,
    auth: { Authorization: `Bearer ${token}` },
  };
}

/** Creates an API key through the API and answers the key itself. */
export async function createApiKey(http: TestAgent, company: TestCompany, scopes: ApiKeyScope[]): Promise<string> {
  const response = await http.post('/v1/api-keys').set(company.auth).send({ name: 'test key', scopes }).expect(201);
  return response.body.key as string;
}

export interface TestAgentLogin {
  agentId: string;
  email: string;
  password: string;
  token: string;
  auth: { Authorization: string };
}

/** Adds an agent with a password to a company and logs it in (the agents API arrives with its own issue). */
export async function addAgent(t: TestApp, company: TestCompany, role: Role): Promise<TestAgentLogin> {
  const email = uniqueEmail(role);
  const password = 'another good password';
  const agent = await t.app.get(AgentsRepository).create(company.companyId, {
    name: `A ${role}`,
    email,
    role,
    status: 'online',
    isActive: true,
    passwordHash: await t.app.get(PasswordHasher).hash(password),
  });
  const response = await t.http.post('/v1/auth/login').send({ email, password }).expect(200);
  const token = response.body.accessToken as string;
  return { agentId: agent._id.toHexString(), email, password, token, auth: { Authorization: `Bearer ${token}` } };
}
