import { afterEach, describe, expect, it, jest } from '@jest/globals';
import type { Request } from 'express';
import jwt from 'jsonwebtoken';
import type { AppConfig } from '../../config/app-config.js';
import type { AgentAccess, AgentAccessCache } from '../agent-access.cache.js';
import { JwtKey } from '../jwt-key.js';
import type { AgentPresence } from '../../agents/agent-presence.js';
import { JwtStrategy, MAX_IAT_AHEAD_SECONDS } from './jwt.strategy.js';

const SECRET = 'a-test-secret-of-at-least-thirty-two-characters';
const COMPANY = '6650f0c2a1b2c3d4e5f60718';
const AGENT = '6650f0c2a1b2c3d4e5f60719';
const MAX_AGE = 7_200;
const T0 = 1_800_000_000;

/** A strategy on a clock the test moves (Date.now, which jsonwebtoken reads too), and an agent the test edits. */
function setUp() {
  let seconds = T0;
  jest.spyOn(Date, 'now').mockImplementation(() => seconds * 1000);
  const agent: AgentAccess = { role: 'admin', isActive: true, tokenVersion: 0 };
  const agents = { find: async () => agent } as unknown as AgentAccessCache;
  const config = { jwtSecret: SECRET, jwtMaxAgeSeconds: MAX_AGE } as AppConfig;
  const seen: string[] = [];
  const presence = { seen: (_companyId: string, agentId: string) => seen.push(agentId) } as unknown as AgentPresence;
  const strategy = new JwtStrategy(new JwtKey(config), agents, config, presence);
  const sign = (claims: Record<string, unknown> = {}, secret = SECRET) =>
    jwt.sign({ sub: AGENT, companyId: COMPANY, role: 'admin', ver: 0, iat: seconds, exp: seconds + 3_600, ...claims }, secret, {
      issuer: 'parley',
      audience: 'parley-api',
    });
  const call = (token: string) => strategy.principalOf({ headers: { authorization: `Bearer ${token}` } } as Request);
  return { strategy, agent, sign, call, seen, advance: (by: number) => (seconds += by) };
}

afterEach(() => {
  jest.restoreAllMocks();
});

describe('JwtStrategy.principalOf', () => {
  it('answers the agent of a valid token on every request, and refuses the same claims signed with another key', async () => {
    const { sign, call, seen } = setUp();
    const token = sign();
    for (let i = 0; i < 3; i++) await expect(call(token)).resolves.toEqual({ kind: 'agent', agentId: AGENT, companyId: COMPANY, role: 'admin' });
    await expect(call(sign({}, 'another-secret-of-at-least-thirty-two-chars'))).rejects.toThrow('Invalid bearer token');
    await expect(call(`${token.slice(0, -2)}xx`)).rejects.toThrow('Invalid bearer token');
    // Each accepted request is a sign of life for idle presence; refused ones are not.
    expect(seen).toEqual([AGENT, AGENT, AGENT]);
  });

  it('verifies a token once: its next requests take the verification it passed', async () => {
    const { sign, call } = setUp();
    const token = sign();
    const verify = jest.spyOn(jwt, 'verify');
    for (let i = 0; i < 3; i++) await call(token);
    expect(verify).toHaveBeenCalledTimes(1);
  });

  it('refuses a token it verified before, once its exp has passed', async () => {
    const { sign, call, advance } = setUp();
    const token = sign();
    await call(token);
    advance(3_599);
    await call(token);
    advance(1);
    await expect(call(token)).rejects.toThrow('The bearer token has expired');
  });

  it('refuses a token it verified before, once it is older than the maximum age whatever its exp says', async () => {
    const { sign, call, advance } = setUp();
    const token = sign({ exp: T0 + 5 * MAX_AGE });
    await call(token);
    advance(MAX_AGE - 1);
    await call(token);
    advance(1);
    await expect(call(token)).rejects.toThrow('The bearer token has expired');
  });

  it('refuses a token issued more than a minute ahead of its clock, and takes one a minute ahead', async () => {
    const { sign, call } = setUp();
    const now = T0;
    await expect(call(sign({ iat: now + MAX_IAT_AHEAD_SECONDS + 1, exp: now + 3_600 }))).rejects.toThrow('issued in the future');
    await expect(call(sign({ iat: now + 86_400, exp: now + 90_000 }))).rejects.toThrow('issued in the future');
    const ahead = sign({ iat: now + MAX_IAT_AHEAD_SECONDS, exp: now + 3_600 });
    await expect(call(ahead)).resolves.toMatchObject({ agentId: AGENT });
  });

  it('still checks the agent on every request: a version change or a deactivation ends a verified token', async () => {
    const { sign, call, agent } = setUp();
    const token = sign();
    await call(token);
    agent.tokenVersion = 1;
    await expect(call(token)).rejects.toThrow("issued before the agent's password, role or status changed");
    agent.tokenVersion = 0;
    agent.isActive = false;
    await expect(call(token)).rejects.toThrow('deactivated or no longer exists');
  });

  it('names a missing token', async () => {
    const { strategy } = setUp();
    await expect(strategy.principalOf({ headers: {} } as Request)).rejects.toThrow('Missing bearer token');
  });
});
