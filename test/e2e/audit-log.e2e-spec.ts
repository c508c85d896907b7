import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { Agent } from '../../src/agents/agent.schema.js';
import { AuditLogEntry } from '../../src/audit/audit-log.schema.js';
import { AuditTrail } from '../../src/audit/audit-trail.js';
import { Channel } from '../../src/channels/channel.schema.js';
import { addAgent, twoCompanies, uniqueEmail, type TestAgentLogin, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { waitFor } from '../support/wait-for.js';

interface Entry {
  id: string;
  sequence: number;
  action: string;
  actor: { type: string; id: string | null; name: string | null };
  target: { type: string; id: string };
  changes: Record<string, [unknown, unknown]> | null;
  at: string;
  requestId: string | null;
  ip: string | null;
}

describe('/v1/audit-log', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let agent: TestAgentLogin;

  beforeAll(async () => {
    t = await createTestApp();
    ({ acme, globex } = await twoCompanies(t.http));
    agent = await addAgent(t, acme, 'agent');
  });
  afterAll(() => t.close());

  const entries = async (company: TestCompany, query = ''): Promise<Entry[]> =>
    (await t.http.get(`/v1/audit-log?limit=100${query}`).set(company.auth).expect(200)).body.data as Entry[];
  const stored = (company: TestCompany) => t.model<AuditLogEntry>(AuditLogEntry.name).find({ companyId: company.companyId }).lean();
  /** Waits for the entry of `action` about `targetId` (entries are chained a moment after the answer). */
  const entryOf = (action: string, targetId: string, company = acme) =>
    waitFor(async () => (await entries(company, `&action=${action}`)).find((entry) => entry.target.id === targetId), {
      message: `${action} ${targetId}`,
    });

  it('records every change of the list, with who, what, the request and no secret or password', async () => {
    const password = 'a secret password 1234';
    const newAgent = await t.http
      .post('/v1/agents')
      .set(acme.auth)
      .set('x-request-id', 'req-audit-1')
      .send({ name: 'Grace', email: uniqueEmail('g'), password })
      .expect(201);
    const created = await entryOf('agent.created', newAgent.body.id);
    expect(created).toMatchObject({
      actor: { type: 'agent', id: acme.agentId, name: expect.any(String) },
      target: { type: 'agent', id: newAgent.body.id },
      requestId: 'req-audit-1',
      ip: expect.any(String),
      changes: { role: [null, 'agent'], password: ['[changed]', '[changed]'] },
    });

    await t.http
      .patch(`/v1/agents/${newAgent.body.id}`)
      .set(acme.auth)
      .send({ role: 'supervisor', password: 'another secret password 99' })
      .expect(200);
    expect((await entryOf('agent.updated', newAgent.body.id)).changes).toEqual({
      role: ['agent', 'supervisor'],
      password: ['[changed]', '[changed]'],
    });
    await t.http.delete(`/v1/agents/${newAgent.body.id}`).set(acme.auth).expect(200);
    expect((await entryOf('agent.deactivated', newAgent.body.id)).changes).toMatchObject({ isActive: [true, false] });
    // A deactivated agent's login is refused, and recorded with its trace on the agent.
    await t.http.post('/v1/auth/login').send({ email: newAgent.body.email, password: 'another secret password 99' }).expect(401);
    expect(await entryOf('auth.login_failed', newAgent.body.email)).toMatchObject({ actor: { type: 'agent', id: newAgent.body.id } });
    const deactivated = await t.model<Agent>(Agent.name).collection.findOne({ _id: new Types.ObjectId(newAgent.body.id as string) });
    expect(deactivated).toMatchObject({ failedLoginCount: 1, lastFailedLoginAt: expect.any(Date) });
    expect(deactivated?.loginCount).toBeUndefined();

    const key = await t.http
      .post('/v1/api-keys')
      .set(acme.auth)
      .send({ name: 'Connector', scopes: ['webhooks:manage'] })
      .expect(201);
    await entryOf('api_key.created', key.body.id);
    await t.http.delete(`/v1/api-keys/${key.body.id}`).set(acme.auth).expect(200);
    await entryOf('api_key.revoked', key.body.id);

    const hook = await t.http
      .post('/v1/webhooks')
      .set(acme.auth)
      .send({ url: 'https://hooks.example.com/audit', events: ['CHAT_SENT'] })
      .expect(201);
    expect((await entryOf('webhook.created', hook.body.id)).changes).toMatchObject({ secret: ['[changed]', '[changed]'] });
    await t.http.patch(`/v1/webhooks/${hook.body.id}`).set(acme.auth).send({ isActive: false }).expect(200);
    expect((await entryOf('webhook.updated', hook.body.id)).changes).toEqual({ isActive: [true, false] });
    // Through Interface B, with the key's management scope: the key is the actor.
    const manager = await t.http
      .post('/v1/api-keys')
      .set(acme.auth)
      .send({ name: 'Manager', scopes: ['webhooks:manage'] })
      .expect(201);
    await t.http.delete(`/api/external/webhooks/${hook.body.id}`).set('x-api-key', manager.body.key).expect(200);
    expect((await entryOf('webhook.deleted', hook.body.id)).actor).toEqual({ type: 'api_key', id: manager.body.id, name: 'Manager' });

    await t.http.patch('/v1/settings').set(acme.auth).send({ timezone: 'Europe/Paris' }).expect(200);
    expect((await entryOf('settings.updated', acme.companyId)).changes).toEqual({ timezone: ['UTC', 'Europe/Paris'] });

    const channel = await t.http.post('/v1/channels').set(acme.auth).send({ key: 'line', type: 'other', name: 'LINE' }).expect(201);
    await entryOf('channel.created', channel.body.id);
    await t.http.patch(`/v1/channels/${channel.body.id}`).set(acme.auth).send({ name: 'LINE 2' }).expect(200);
    expect((await entryOf('channel.updated', channel.body.id)).changes).toEqual({ name: ['LINE', 'LINE 2'] });

    const template = await t.http
      .post('/v1/message-templates')
      .set(acme.auth)
      .send({ channel: 'line', name: 'hello', language: 'en', category: 'utility', body: 'Hello {{1}}' })
      .expect(201);
    await entryOf('template.created', template.body.id);
    const templatesKey = await t.http
      .post('/v1/api-keys')
      .set(acme.auth)
      .send({ name: 'Templates', scopes: ['templates:manage'] })
      .expect(201);
    await t.http
      .patch(`/api/external/message-templates/${template.body.id}`)
      .set('x-api-key', templatesKey.body.key)
      .send({ status: 'approved' })
      .expect(200);
    expect(await entryOf('template.status_reported', template.body.id)).toMatchObject({
      actor: { type: 'api_key', id: templatesKey.body.id },
      changes: { status: ['pending', 'approved'] },
    });
    await t.http.delete(`/v1/message-templates/${template.body.id}`).set(acme.auth).expect(200);
    await entryOf('template.deleted', template.body.id);
    await t.http.delete(`/v1/channels/${channel.body.id}`).set(acme.auth).expect(200);
    await entryOf('channel.deleted', channel.body.id);

    const policy = await t.http.post('/v1/sla-policies').set(acme.auth).send({ name: 'VIP', resolutionSeconds: 3600 }).expect(201);
    await entryOf('sla_policy.created', policy.body.id);
    await t.http.patch(`/v1/sla-policies/${policy.body.id}`).set(acme.auth).send({ resolutionSeconds: 7200 }).expect(200);
    expect((await entryOf('sla_policy.updated', policy.body.id)).changes).toEqual({ resolutionSeconds: [3600, 7200] });
    await t.http.delete(`/v1/sla-policies/${policy.body.id}`).set(acme.auth).expect(200);
    await entryOf('sla_policy.deleted', policy.body.id);

    const canned = await t.http.post('/v1/canned-responses').set(acme.auth).send({ shortCode: 'hi', title: 'Hi', content: 'Hello!' }).expect(201);
    await entryOf('canned_response.created', canned.body.id);
    await t.http.patch(`/v1/canned-responses/${canned.body.id}`).set(acme.auth).send({ title: 'Hey' }).expect(200);
    await entryOf('canned_response.updated', canned.body.id);
    await t.http.delete(`/v1/canned-responses/${canned.body.id}`).set(acme.auth).expect(200);
    await entryOf('canned_response.deleted', canned.body.id);

    const flow = await t.http
      .post('/v1/flows')
      .set(acme.auth)
      .send({ name: 'Tag', steps: [{ type: 'add_tags', tags: ['seen'] }] })
      .expect(201);
    await entryOf('flow.created', flow.body.id);
    await t.http
      .put(`/v1/flows/${flow.body.id}`)
      .set(acme.auth)
      .send({ name: 'Tag 2', steps: [{ type: 'add_tags', tags: ['seen'] }] })
      .expect(200);
    expect((await entryOf('flow.replaced', flow.body.id)).changes).toMatchObject({ name: ['Tag', 'Tag 2'] });
    await t.http.delete(`/v1/flows/${flow.body.id}`).set(acme.auth).expect(200);
    await entryOf('flow.deleted', flow.body.id);

    // A rule's conditions and actions may hold a contact's e-mail or phone: named, never shown.
    const contactEmail = uniqueEmail('rule-contact');
    const rule = await t.http
      .post('/v1/automation-rules')
      .set(acme.auth)
      .send({
        name: 'Escalate',
        trigger: { event: 'message.received' },
        conditions: { field: 'status', op: 'eq', value: 'queued' },
        actions: [{ type: 'send_message', text: `Write to ${contactEmail}` }],
      })
      .expect(201);
    expect(await entryOf('automation_rule.created', rule.body.id)).toMatchObject({
      actor: { type: 'agent', id: acme.agentId },
      target: { type: 'automation_rule', id: rule.body.id },
      changes: { name: [null, 'Escalate'], conditions: [null, null], actions: [null, null], isActive: [null, true] },
    });
    await t.http
      .patch(`/v1/automation-rules/${rule.body.id}`)
      .set(acme.auth)
      .send({ isActive: false, actions: [{ type: 'send_message', text: `Call ${contactEmail} back` }] })
      .expect(200);
    expect((await entryOf('automation_rule.updated', rule.body.id)).changes).toEqual({ isActive: [true, false], actions: [null, null] });
    await t.http.delete(`/v1/automation-rules/${rule.body.id}`).set(acme.auth).expect(200);
    expect(await entryOf('automation_rule.deleted', rule.body.id)).toMatchObject({
      target: { type: 'automation_rule', id: rule.body.id },
      changes: null,
    });

    // Every entry stored, raw: no password, no secret, no key, no hash of either, no contact's e-mail.
    const raw = JSON.stringify(await stored(acme));
    for (const secret of [password, 'another secret password 99', hook.body.secret, key.body.key, manager.body.key, contactEmail])
      expect(raw).not.toContain(secret);
    expect(raw).not.toMatch(/passwordHash|keyHash|scrypt/);
    // Nothing of acme's reaches globex's log.
    expect((await entries(globex)).filter((entry) => entry.action !== 'auth.login')).toEqual([]);
  });

  it('records logins and failed logins with the e-mail tried, each in one write on the agent', async () => {
    const agents = t.model<Agent>(Agent.name).collection;
    const trace = async () => {
      const row = await agents.findOne({ _id: new Types.ObjectId(agent.agentId) });
      return {
        lastLoginAt: row?.lastLoginAt,
        loginCount: row?.loginCount,
        lastFailedLoginAt: row?.lastFailedLoginAt,
        failedLoginCount: row?.failedLoginCount,
      };
    };
    const start = await trace();
    expect(start.loginCount).toBeGreaterThanOrEqual(1); // addAgent logged it in

    await t.http.post('/v1/auth/login').send({ email: agent.email, password: 'not the password' }).expect(401);
    const afterFailure = await trace();
    expect(afterFailure).toMatchObject({ loginCount: start.loginCount, failedLoginCount: (start.failedLoginCount ?? 0) + 1 });
    expect(afterFailure.lastFailedLoginAt).toBeInstanceOf(Date);
    const failed = await entryOf('auth.login_failed', agent.email);
    expect(failed).toMatchObject({ actor: { type: 'agent', id: agent.agentId }, target: { type: 'login', id: agent.email } });
    expect(JSON.stringify(failed)).not.toContain('not the password');

    const login = await t.http.post('/v1/auth/login').send({ email: agent.email, password: agent.password }).expect(200);
    expect(login.body.agent).not.toHaveProperty('lastLoginAt');
    expect(login.body.agent).not.toHaveProperty('loginCount');
    const afterLogin = await trace();
    expect(afterLogin).toMatchObject({ loginCount: start.loginCount! + 1, failedLoginCount: afterFailure.failedLoginCount });
    expect(afterLogin.lastLoginAt!.getTime()).toBeGreaterThan(start.lastLoginAt!.getTime());
    const logins = await waitFor(async () => {
      const found = (await entries(acme, '&action=auth.login')).filter((entry) => entry.target.id === agent.agentId);
      return found.length >= 2 ? found : undefined;
    });
    expect(new Date(logins[0].at).getTime()).toBe(afterLogin.lastLoginAt!.getTime());

    // An e-mail no agent logs in with changes nothing and records nothing.
    const before = (await stored(acme)).length;
    await t.http
      .post('/v1/auth/login')
      .send({ email: uniqueEmail('nobody'), password: 'whatever it is' })
      .expect(401);
    await t.app.get(AuditTrail).sweep(new Date(Date.now() + 60_000));
    expect((await stored(acme)).length).toBe(before);
    expect(await trace()).toEqual(afterLogin);
  });

  it('writes no entry for a refused change', async () => {
    const before = (await stored(acme)).length;
    await t.http.post('/v1/channels').set(acme.auth).send({ key: 'bad key!', type: 'other', name: 'x' }).expect(400);
    await t.http
      .post('/v1/webhooks')
      .set(acme.auth)
      .send({ url: 'ftp://example.com', events: ['CHAT_SENT'] })
      .expect(400);
    await t.http.post('/v1/sla-policies').set(agent.auth).send({ name: 'No', resolutionSeconds: 60 }).expect(403);
    await t.http.patch(`/v1/agents/${acme.agentId}`).set(agent.auth).send({ role: 'agent' }).expect(403);
    await t.http.patch('/v1/settings').set(acme.auth).send({ timezone: 'Mars/Olympus' }).expect(400);
    await t.http.delete('/v1/flows/000000000000000000000000').set(acme.auth).expect(404);
    await t.http
      .post('/v1/automation-rules')
      .set(acme.auth)
      .send({ name: 'Bad', trigger: { event: 'no.such_event' }, actions: [{ type: 'close' }] })
      .expect(400);
    await t.http
      .post('/v1/automation-rules')
      .set(agent.auth)
      .send({ name: 'Not mine', trigger: { event: 'message.received' }, actions: [{ type: 'close' }] })
      .expect(403);
    await t.http.delete('/v1/automation-rules/000000000000000000000000').set(acme.auth).expect(404);
    // A change that is refused never leaves a pending entry either: the sweep has nothing to chain.
    await t.app.get(AuditTrail).sweep(new Date(Date.now() + 60_000));
    expect((await stored(acme)).length).toBe(before);
  });

  it('is for admins only, filters, and pages newest first without repeats', async () => {
    await t.http.get('/v1/audit-log').set(agent.auth).expect(403);
    await t.http.get('/v1/audit-log/verify').set(agent.auth).expect(403);
    await t.http.get('/v1/audit-log?after=yesterday').set(acme.auth).expect(400);
    const all = await entries(acme);
    expect(all.map((entry) => entry.sequence)).toEqual([...all.map((entry) => entry.sequence)].sort((a, b) => b - a));
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: Entry[]; nextCursor: string | null } } = await t.http
        .get(`/v1/audit-log?limit=7${cursor ? `&cursor=${cursor}` : ''}`)
        .set(acme.auth)
        .expect(200);
      seen.push(...page.body.data.map((entry) => entry.sequence));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.map((entry) => entry.sequence));
    const byActor = await entries(acme, `&actorId=${agent.agentId}`);
    expect(byActor.length).toBeGreaterThan(0);
    expect(byActor.every((entry) => entry.actor.id === agent.agentId)).toBe(true);
    const byTarget = await entries(acme, `&targetType=settings&targetId=${acme.companyId}`);
    expect(byTarget.map((entry) => entry.action)).toEqual(['settings.updated']);
  });

  it('chains an entry left pending by a process that died after the write', async () => {
    const channel = await t.http.post('/v1/channels').set(acme.auth).send({ key: 'left', type: 'other', name: 'Left' }).expect(201);
    await entryOf('channel.created', channel.body.id);
    const left = {
      id: 'aud_leftbehind0000000001',
      at: new Date(Date.now() - 60_000),
      actor: { type: 'system', id: null },
      action: 'channel.updated',
      target: { type: 'channel', id: channel.body.id },
      changes: null,
      requestId: null,
      ip: null,
    };
    await t.model<Channel>(Channel.name).updateOne({ _id: channel.body.id, companyId: acme.companyId }, { $push: { pendingAudit: left } } as never);
    expect(await t.app.get(AuditTrail).sweep(new Date())).toBeGreaterThanOrEqual(1);
    expect(await entryOf('channel.updated', channel.body.id)).toMatchObject({ id: left.id, actor: { type: 'system', name: 'Parley' } });
    const after = await t.model<Channel>(Channel.name).findOne({ _id: channel.body.id, companyId: acme.companyId }).select('+pendingAudit').lean();
    expect((after as { pendingAudit?: unknown[] } | null)?.pendingAudit ?? []).toEqual([]);
  });

  it('verifies the chain and names the sequence of an entry changed in the database', async () => {
    const verified = await t.http.get('/v1/audit-log/verify').set(acme.auth).expect(200);
    const count = (await stored(acme)).length;
    expect(verified.body).toEqual({ ok: true, checked: count, firstBadSequence: null });
    const [victim] = await t.model<AuditLogEntry>(AuditLogEntry.name).find({ companyId: acme.companyId, action: 'settings.updated' }).lean();
    await t
      .model<AuditLogEntry>(AuditLogEntry.name)
      .updateOne({ _id: victim._id, companyId: acme.companyId }, { $set: { 'changes.timezone': ['UTC', 'Asia/Tokyo'] } });
    const tampered = await t.http.get('/v1/audit-log/verify').set(acme.auth).expect(200);
    expect(tampered.body).toMatchObject({ ok: false, firstBadSequence: victim.sequence });
    // Another company's chain is its own.
    expect((await t.http.get('/v1/audit-log/verify').set(globex.auth).expect(200)).body.ok).toBe(true);
  });
});
