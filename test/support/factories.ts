import { randomUUID } from 'node:crypto';
import type TestAgent from 'supertest/lib/agent.js';
import type { ApiKeyScope, Role } from '../../src/auth/auth-principal.js';
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

/** Registers a company with its admin, through the API (`headers`, e.g. an X-Forwarded-For, go with the request). */
export async function registerCompany(http: TestAgent, name = 'Acme', headers: Record<string, string> = {}): Promise<TestCompany> {
  const email = uniqueEmail('admin');
  const password = 'correct horse battery staple';
  const response = await http
    .post('/v1/auth/register')
    .set(headers)
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

/**
 * The usual pair of a tenancy test: Acme, the company under test, and Globex, whose data must never show
 * (registered together, through the API).
 */
export async function twoCompanies(http: TestAgent): Promise<{ acme: TestCompany; globex: TestCompany }> {
  const [acme, globex] = await Promise.all([registerCompany(http, 'Acme'), registerCompany(http, 'Globex')]);
  return { acme, globex };
}

/** Creates an API key through the API (limited to `channels` when given) and answers the key itself. */
export async function createApiKey(http: TestAgent, company: TestCompany, scopes: ApiKeyScope[], channels?: string[]): Promise<string> {
  const response = await http.post('/v1/api-keys').set(company.auth).send({ name: 'test key', scopes, channels }).expect(201);
  return response.body.key as string;
}

export interface TestAgentLogin {
  agentId: string;
  email: string;
  password: string;
  token: string;
  auth: { Authorization: string };
}

/** Adds an online agent with a password to a company through POST /v1/agents (as its admin), and logs it in. */
export async function addAgent(t: TestApp, company: TestCompany, role: Role): Promise<TestAgentLogin> {
  const email = uniqueEmail(role);
  const password = 'another good password';
  const created = await t.http
    .post('/v1/agents')
    .set(company.auth)
    .send({ name: `A ${role}`, email, role, status: 'online', password })
    .expect(201);
  const response = await t.http.post('/v1/auth/login').send({ email, password }).expect(200);
  const token = response.body.accessToken as string;
  return { agentId: created.body.id, email, password, token, auth: { Authorization: `Bearer ${token}` } };
}

/** Defines the company's custom attributes of `model` (contract section 20): values of undefined keys are refused. */
export async function defineAttributes(
  http: TestAgent,
  company: TestCompany,
  model: 'contact' | 'conversation',
  types: Record<string, 'text' | 'number' | 'boolean' | 'date'>,
): Promise<void> {
  for (const [key, type] of Object.entries(types)) {
    await http.post('/v1/attribute-definitions').set(company.auth).send({ model, key, label: key, type }).expect(201);
  }
}
