import { beforeAll, describe, expect, it } from '@jest/globals';
import type { ConversationView } from '../../src/conversations/conversation.view.js';
import { conversationsSuite } from '../support/conversations.js';
import { addAgent, registerCompany, type TestCompany } from '../support/factories.js';

describe('/v1/conversations, listed', () => {
  const suite = conversationsSuite();
  const { start } = suite;

  describe('GET /v1/conversations', () => {
    let initech: TestCompany;
    let agentId: string;
    const ids: Record<string, string> = {};

    beforeAll(async () => {
      initech = await registerCompany(suite.t.http, 'Initech');
      agentId = (await addAgent(suite.t, initech, 'agent')).agentId;
      ids.bot = (await start(initech, { priority: 'low' })).id;
      ids.queued = (await start(initech, { priority: 'high' })).id;
      await suite.t.http.patch(`/v1/conversations/${ids.queued}`).set(initech.auth).send({ status: 'queued' }).expect(200);
      ids.human = (await start(initech)).id;
      await suite.t.http.post(`/v1/conversations/${ids.human}/assign`).set(initech.auth).send({ agentId }).expect(200);
      ids.closed = (await start(initech, { priority: 'high' })).id;
      await suite.t.http.post(`/v1/conversations/${ids.closed}/close`).set(initech.auth).send({}).expect(200);
    });

    const list = async (query: Record<string, string | number>) =>
      (await suite.t.http.get('/v1/conversations').query(query).set(initech.auth).expect(200)).body as {
        data: ConversationView[];
        nextCursor: string | null;
      };

    it('lists the company’s conversations newest first', async () => {
      const page = await list({});
      expect(page.data.map((conversation) => conversation.id)).toEqual([ids.closed, ids.human, ids.queued, ids.bot]);
      expect(page.nextCursor).toBeNull();
    });

    it('filters by status, priority and assigned agent, alone and together', async () => {
      for (const status of ['bot', 'queued', 'human', 'closed']) {
        expect((await list({ status })).data.map((conversation) => conversation.id)).toEqual([ids[status]]);
      }
      expect((await list({ priority: 'high' })).data.map((c) => c.id)).toEqual([ids.closed, ids.queued]);
      expect((await list({ priority: 'high', status: 'queued' })).data.map((c) => c.id)).toEqual([ids.queued]);
      expect((await list({ assignedAgentId: agentId })).data.map((c) => c.id)).toEqual([ids.human]);
      expect((await list({ assignedAgentId: agentId, status: 'bot' })).data).toEqual([]);
      expect((await list({ assignedAgentId: initech.agentId })).data).toEqual([]);
    });

    it('answers 400 for bad filters, limits, cursors and smuggled operators', async () => {
      const bad = [
        'status=open',
        'priority=urgent',
        'assignedAgentId=nope',
        'limit=0',
        'limit=101',
        'limit=ten',
        'startAfter=bm90LWEtY3Vyc29y',
        'status[$ne]=x',
        'assignedAgentId[$gt]=',
        'status=bot,open',
        'status=',
        'cursor=abc',
      ];
      for (const query of bad) {
        const response = await suite.t.http.get(`/v1/conversations?${query}`).set(initech.auth);
        expect({ query, status: response.status }).toEqual({ query, status: 400 });
      }
      const malformed = await suite.t.http.get('/v1/conversations?assignedAgentId=nope').set(initech.auth).expect(400);
      expect(malformed.body.errors).toEqual([{ field: 'assignedAgentId', message: 'assignedAgentId must be a 24-character hex id' }]);
    });

    it('never shows another company’s conversations', async () => {
      const page = await suite.t.http.get('/v1/conversations').set(suite.globex.auth).query({ limit: 100 }).expect(200);
      const shown = new Set(page.body.data.map((conversation: ConversationView) => conversation.id));
      for (const id of Object.values(ids)) expect(shown.has(id)).toBe(false);
    });

    it('walks pages of 2 to the end while new conversations arrive: no repeats, no gaps', async () => {
      const hooli = await registerCompany(suite.t.http, 'Hooli');
      const existing: string[] = [];
      for (let index = 0; index < 7; index += 1) existing.unshift((await start(hooli)).id);

      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const response: { body: { data: ConversationView[]; nextCursor: string | null } } = await suite.t.http
          .get('/v1/conversations')
          .query(cursor ? { limit: 2, startAfter: cursor } : { limit: 2 })
          .set(hooli.auth)
          .expect(200);
        expect(response.body.data.length).toBeLessThanOrEqual(2);
        seen.push(...response.body.data.map((conversation) => conversation.id));
        cursor = response.body.nextCursor;
        pages += 1;
        // Newer conversations arrive meanwhile; they belong before the first page.
        await start(hooli);
      } while (cursor);
      expect(seen).toEqual(existing);
      expect(pages).toBe(4);

      const fresh = await suite.t.http.get('/v1/conversations').query({ limit: 100 }).set(hooli.auth).expect(200);
      expect(fresh.body.data).toHaveLength(11);
      expect(fresh.body.data.slice(4).map((conversation: ConversationView) => conversation.id)).toEqual(existing);
    });

    it('defaults to 50 per page', async () => {
      const umbrella = await registerCompany(suite.t.http, 'Umbrella');
      for (let index = 0; index < 51; index += 1) await start(umbrella);
      const first = await suite.t.http.get('/v1/conversations').set(umbrella.auth).expect(200);
      expect(first.body.data).toHaveLength(50);
      const second = await suite.t.http
        .get('/v1/conversations')
        .query({ startAfter: first.body.nextCursor })
        .set(umbrella.auth)
        .expect(200);
      expect(second.body.data).toHaveLength(1);
      expect(second.body.nextCursor).toBeNull();
    });
  });
});
