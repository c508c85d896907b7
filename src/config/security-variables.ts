import ipaddr from 'ipaddr.js';
import { ConfigurationError } from './configuration-error.js';

/** Express's `trust proxy`: false (the socket's address), a hop count, or the proxies' addresses and subnets. */
export type TrustProxy = false | number | string[];

/** One key that seals webhook signing secrets; the first of WEBHOOK_SECRET_KEYS seals, every one opens. */
export interface WebhookSecretKey {
  id: string;
  key: Buffer;
}

/** Express's own names for address ranges, accepted in the TRUST_PROXY list as they are. */
const EXPRESS_SUBNET_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const KEY_BYTES = 32;

function isAddressOrSubnet(entry: string): boolean {
  if (EXPRESS_SUBNET_NAMES.has(entry)) return true;
  if (!entry.includes('/')) return ipaddr.isValid(entry);
  try {
    ipaddr.parseCIDR(entry);
    return true;
  } catch {
    return false;
  }
}

/**
 * TRUST_PROXY, with Express's semantics: unset or `false` trusts no proxy (the client is the socket's
 * peer); a number trusts that many hops of `X-Forwarded-For` from the right; a comma-separated list of
 * addresses, CIDR subnets or Express's names (`loopback`, `linklocal`, `uniquelocal`) trusts those
 * proxies. `true` (trust every hop) is refused: any client could then choose its own address.
 */
export function trustProxy(value: string | undefined): TrustProxy {
  if (value === undefined || value.toLowerCase() === 'false') return false;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 10) throw new ConfigurationError('TRUST_PROXY', 'must be a hop count from 0 to 10, or a list of proxy addresses', value);
    return hops === 0 ? false : hops;
  }
  if (value.toLowerCase() === 'true') {
    throw new ConfigurationError('TRUST_PROXY', 'must not be "true" (any client could choose its address): give a hop count or the proxies\' addresses', value);
  }
  const entries = value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  const bad = entries.find((entry) => !isAddressOrSubnet(entry));
  if (bad !== undefined || entries.length === 0) {
    throw new ConfigurationError('TRUST_PROXY', 'must be false, a hop count, or a comma-separated list of IP addresses and CIDR subnets', bad ?? value);
  }
  return entries;
}

/**
 * WEBHOOK_SECRET_KEYS: `id:key[,id:key...]`, each key 32 bytes in base64 or base64url (e.g.
 * `openssl rand -base64 32`), ids of letters, digits, `_` and `-`. The first seals new secrets; all open.
 */
export function webhookSecretKeys(value: string | undefined): WebhookSecretKey[] {
  if (value === undefined) return [];
  const keys = value.split(',').map((entry) => {
    const [id, encoded, ...rest] = entry.trim().split(':');
    if (!id || !KEY_ID.test(id) || encoded === undefined || rest.length > 0) {
      throw new ConfigurationError('WEBHOOK_SECRET_KEYS', 'must be a comma-separated list of id:base64key (ids of letters, digits, _ and -)');
    }
    const key = Buffer.from(encoded.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (key.length !== KEY_BYTES || !/^[A-Za-z0-9+/_-]+=*$/.test(encoded)) {
      throw new ConfigurationError('WEBHOOK_SECRET_KEYS', `key "${id}" must be ${KEY_BYTES} bytes in base64 (openssl rand -base64 32)`);
    }
    return { id, key };
  });
  const ids = keys.map((entry) => entry.id);
  const repeated = ids.find((id, index) => ids.indexOf(id) !== index);
  if (repeated) throw new ConfigurationError('WEBHOOK_SECRET_KEYS', `lists the key id "${repeated}" twice`);
  return keys;
}

/**
 * CORS_ORIGINS: the browser origins (`https://app.example.com`, scheme, host and port only) that may call the API
 * from their pages, comma-separated. Unset: none, so a deployment is closed to browsers until it names them. `*` is
 * refused: the API's answers are a company's data.
 */
export function corsOrigins(value: string | undefined): string[] {
  if (value === undefined) return [];
  const origins = value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin.replace(/\/$/, '').toLowerCase()) {
      throw new ConfigurationError('CORS_ORIGINS', 'must be a comma-separated list of origins such as https://app.example.com (scheme, host and port; no path, no *)', origin);
    }
  }
  return origins.map((origin) => new URL(origin).origin);
}
