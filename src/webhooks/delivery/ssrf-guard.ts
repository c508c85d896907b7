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

/** Cloud metadata endpoints, refused by name (before any DNS) and by address, whatever the policy. */
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);
const METADATA_ADDRESSES = new Set(['169.254.169.254', '169.254.170.2', '169.254.170.23', 'fd00:ec2::254', '100.100.100.200']);

/** The only IPv6 unicast space routed on the internet (2000::/3); the rest is reserved or special. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');
/** `::a.b.c.d`, the deprecated IPv4-compatible form. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

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
 * Whether webhooks may go to loopback, private, link-local and the like (WEBHOOK_ALLOW_PRIVATE_URLS, for
 * development and private deployments). Cloud metadata targets are refused either way.
 */
export interface TargetPolicy {
  allowPrivate: boolean;
}

export const PUBLIC_ONLY: TargetPolicy = { allowPrivate: false };

/** The IPv4 address an IPv6 one carries through a translator or tunnel (NAT64, 6to4, Teredo, `::a.b.c.d`). */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const bytes = address.toByteArray();
  const range = address.range();
  if (range === 'rfc6052' || address.match(IPV4_COMPATIBLE)) return new ipaddr.IPv4(bytes.slice(12, 16));
  if (range === '6to4') return new ipaddr.IPv4(bytes.slice(2, 6));
  if (range === 'teredo') return new ipaddr.IPv4(bytes.slice(12, 16).map((byte) => byte ^ 0xff));
  return null;
}

function isMetadata(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (METADATA_ADDRESSES.has(address.toString())) return true;
  const carried = address.kind() === 'ipv6' ? embeddedIPv4(address as ipaddr.IPv6) : null;
  return carried !== null && METADATA_ADDRESSES.has(carried.toString());
}

/**
 * What an address is when it may not receive webhooks ("a loopback address"), or null when it may.
 * Cloud metadata addresses are always refused, also when carried inside an IPv6 address. Otherwise,
 * unless private targets are allowed, only ipaddr.js's plain `unicast` range passes, and for IPv6 only
 * global unicast (2000::/3): besides loopback, private, link-local, CGNAT and the like, that refuses
 * reserved and documentation ranges, the deprecated `::a.b.c.d` form and the IPv6 ranges that embed an
 * IPv4 address (NAT64, 6to4, Teredo), through which a private one could be reached. IPv4-mapped IPv6
 * addresses are judged as the IPv4 address they carry.
 */
export function refusalForAddress(address: string, policy: TargetPolicy = PUBLIC_ONLY): string | null {
  if (!isIP(address)) return 'not an IP address';
  // ipaddr.js reads `::a.b.c.d` as `::ffff:a.b.c.d` (IPv4-mapped) where a socket takes the IPv4-compatible
  // `::a.b.c.d`: judge the canonical text a URL gives it (`::808:808`) instead.
  const literal = ipaddr.parse(isIP(address) === 6 ? new URL(`http://[${address.split('%')[0]}]`).hostname.slice(1, -1) : address);
  const parsed = literal.kind() === 'ipv6' && (literal as ipaddr.IPv6).isIPv4MappedAddress() ? (literal as ipaddr.IPv6).toIPv4Address() : literal;
  if (isMetadata(parsed)) return 'a cloud metadata address';
  if (policy.allowPrivate) return null;
  const range = parsed.range();
  if (range !== 'unicast') return `a ${RANGE_NAMES[range] ?? `special-purpose (${range})`} address`;
  if (parsed.kind() === 'ipv6' && !(parsed as ipaddr.IPv6).match(GLOBAL_UNICAST_V6)) return 'not a global unicast IPv6 address';
  return null;
}

function refusedAddresses(addresses: LookupAddress[], policy: TargetPolicy): string | null {
  for (const { address } of addresses) {
    const refusal = refusalForAddress(address, policy);
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
export function checkUrlWithoutDns(target: string, policy: TargetPolicy = PUBLIC_ONLY): string | null {
  const host = hostOf(parseWebhookUrl(target));
  if (METADATA_HOSTS.has(host)) throw new UnsafeWebhookUrlError(`url refused: ${host} is a cloud metadata host`);
  if (!isIP(host)) return host;
  const refusal = refusalForAddress(host, policy);
  if (refusal) throw new UnsafeWebhookUrlError(`url refused: ${host} is ${refusal}`);
  return null;
}

export type Resolver = (host: string) => Promise<LookupAddress[]>;

export const resolveAll: Resolver = (host) =>
  new Promise((resolve, reject) =>
    dnsLookup(host, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  );

/**
 * The registration check: the URL's shape, then every address its host resolves to. A name that does not
 * resolve is refused, unless private targets are allowed (a development host may come up later: the
 * delivery check still applies then).
 */
export async function assertAllowedUrl(target: string, policy: TargetPolicy = PUBLIC_ONLY, resolve: Resolver = resolveAll): Promise<void> {
  const host = checkUrlWithoutDns(target, policy);
  if (host === null) return;
  let addresses: LookupAddress[];
  try {
    addresses = await resolve(host);
  } catch {
    if (policy.allowPrivate) return;
    throw new UnsafeWebhookUrlError(`url refused: ${host} cannot be resolved`);
  }
  const refusal = refusedAddresses(addresses, policy);
  if (refusal) throw new UnsafeWebhookUrlError(`url refused: ${host} resolves to ${refusal}`);
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net/tls `connect` (undici's `connect.lookup`): resolves, refuses the connection
 * when any address is refused by `policy`, and hands the socket exactly the addresses it checked, so DNS
 * cannot answer differently between the check and the connection (no rebinding window).
 */
export function createGuardedLookup(policy: TargetPolicy = PUBLIC_ONLY, lookup: typeof dnsLookup = dnsLookup) {
  return function guardedLookup(hostname: string, options: { all?: boolean; family?: number | 'IPv4' | 'IPv6' }, callback: LookupCallback): void {
    const allOptions: LookupAllOptions = { ...options, all: true };
    lookup(hostname, allOptions, (error, addresses) => {
      if (error) return callback(error, []);
      const refusal = refusedAddresses(addresses, policy);
      if (refusal || addresses.length === 0) {
        const refused = new UnsafeWebhookUrlError(`refused: ${hostname} resolves to ${refusal ?? 'no address'}`);
        return callback(Object.assign(refused, { code: 'EWEBHOOKSSRF' }), []);
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}
