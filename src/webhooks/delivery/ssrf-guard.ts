import ipaddr from 'ipaddr.js';
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { isIP } from 'node:net';

/** A webhook target refused by the SSRF rule; the message says why and is safe to show the caller. */
export class UnsafeWebhookUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsafeWebhookUrlError';
  }
}

/** Cloud metadata endpoints, refused by name (before any DNS) and by address. */
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);
const METADATA_ADDRESSES = new Set(['169.254.169.254', '169.254.170.2', 'fd00:ec2::254', '100.100.100.200']);

const RANGE_NAMES: Record<string, string> = {
  loopback: 'loopback',
  private: 'private',
  uniqueLocal: 'private',
  linkLocal: 'link-local',
  carrierGradeNat: 'shared (CGNAT)',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
};

/**
 * What an address is when it may not receive webhooks ("a loopback address"), or null when it is a
 * public unicast address. Only ipaddr.js's plain `unicast` range passes: besides loopback, private,
 * link-local, CGNAT and the like, that also refuses reserved and documentation ranges and the IPv6
 * ranges that embed an IPv4 address (NAT64, 6to4, Teredo), through which a private one could be
 * reached. IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry.
 */
export function refusalForAddress(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const parsed = ipaddr.process(address);
  if (METADATA_ADDRESSES.has(parsed.toString())) return 'a cloud metadata address';
  const range = parsed.range();
  if (range === 'unicast') return null;
  return `a ${RANGE_NAMES[range] ?? `special-purpose (${range})`} address`;
}

function refusedAddresses(addresses: LookupAddress[]): string | null {
  for (const { address } of addresses) {
    const refusal = refusalForAddress(address);
    if (refusal) return `${address}, ${refusal}`;
  }
  return null;
}

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
}

/** Any webhook URL, private targets allowed or not: absolute http(s), without credentials. */
export function parseWebhookUrl(target: string): URL {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new UnsafeWebhookUrlError('url must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UnsafeWebhookUrlError('url must use http or https');
  if (url.username || url.password) throw new UnsafeWebhookUrlError('url must not contain credentials');
  return url;
}

/**
 * What can be checked without DNS: the URL's shape, then that it names neither a metadata host nor
 * a refused IP literal. Returns the host to resolve (null for an IP literal, already checked).
 */
export function checkUrlWithoutDns(target: string): string | null {
  const host = hostOf(parseWebhookUrl(target));
  if (METADATA_HOSTS.has(host)) throw new UnsafeWebhookUrlError(`url refused: ${host} is a cloud metadata host`);
  if (!isIP(host)) return host;
  const refusal = refusalForAddress(host);
  if (refusal) throw new UnsafeWebhookUrlError(`url refused: ${host} is ${refusal}`);
  return null;
}

export type Resolver = (host: string) => Promise<LookupAddress[]>;

export const resolveAll: Resolver = (host) =>
  new Promise((resolve, reject) =>
    dnsLookup(host, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  );

/** The registration check: the URL's shape, then every address its host resolves to. */
export async function assertPublicUrl(target: string, resolve: Resolver = resolveAll): Promise<void> {
  const host = checkUrlWithoutDns(target);
  if (host === null) return;
  let addresses: LookupAddress[];
  try {
    addresses = await resolve(host);
  } catch {
    throw new UnsafeWebhookUrlError(`url refused: ${host} cannot be resolved`);
  }
  const refusal = refusedAddresses(addresses);
  if (refusal) throw new UnsafeWebhookUrlError(`url refused: ${host} resolves to ${refusal}`);
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net/tls `connect` (undici's `connect.lookup`): resolves, refuses the connection
 * when any address is not public, and hands the socket exactly the addresses it checked, so DNS
 * cannot answer differently between the check and the connection (no rebinding window).
 */
export function createGuardedLookup(lookup: typeof dnsLookup = dnsLookup) {
  return function guardedLookup(hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback): void {
    const allOptions: LookupAllOptions = { ...options, all: true };
    lookup(hostname, allOptions, (error, addresses) => {
      if (error) return callback(error, []);
      const refusal = refusedAddresses(addresses);
      if (refusal || addresses.length === 0) {
        const refused = new UnsafeWebhookUrlError(`refused: ${hostname} resolves to ${refusal ?? 'no address'}`);
        return callback(Object.assign(refused, { code: 'EWEBHOOKSSRF' }), []);
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}
