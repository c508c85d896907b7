import { describe, expect, it } from '@jest/globals';
import type { LookupAddress } from 'node:dns';
import { assertAllowedUrl, checkUrlWithoutDns, createGuardedLookup, refusalForAddress, UnsafeWebhookUrlError } from './ssrf-guard.js';

describe('refusalForAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.10', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['100.64.0.1', 'CGNAT'],
    ['100.127.255.254', 'CGNAT'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['169.254.169.254', 'cloud metadata'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['100.100.100.200', 'cloud metadata'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['64:ff9b::a00:1', 'special-purpose'],
    ['2002:a00:1::1', 'special-purpose'],
    ['::808:808', 'not a global unicast IPv6 address'],
    ['::8.8.8.8', 'not a global unicast IPv6 address'],
    ['::a9fe:a9fe', 'cloud metadata'],
    ['64:ff9b::a9fe:a9fe', 'cloud metadata'],
    ['2002:a9fe:a9fe::1', 'cloud metadata'],
    ['4000::1', 'not a global unicast IPv6 address'],
    ['169.254.170.2', 'cloud metadata'],
    ['192.0.2.1', 'special-purpose'],
    ['not-an-ip', 'not an IP address'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(refusalForAddress(address)).toContain(reason);
  });

  it.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])(
    'allows the public address %s',
    (address) => {
      expect(refusalForAddress(address)).toBeNull();
    },
  );
});

describe('with private targets allowed', () => {
  const allowPrivate = { allowPrivate: true };

  it.each(['127.0.0.1', '::1', '10.1.2.3', '192.168.1.10', 'fd12::1', '169.254.1.1', '8.8.8.8'])('allows %s', (address) => {
    expect(refusalForAddress(address, allowPrivate)).toBeNull();
  });

  it.each(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200', '::ffff:169.254.169.254', '::169.254.169.254', '64:ff9b::a9fe:a9fe'])(
    'still refuses the cloud metadata address %s',
    (address) => {
      expect(refusalForAddress(address, allowPrivate)).toBe('a cloud metadata address');
    },
  );

  it('refuses metadata hosts and names resolving to metadata addresses; tolerates names that do not resolve yet', async () => {
    expect(() => checkUrlWithoutDns('http://metadata.google.internal/', allowPrivate)).toThrow('cloud metadata host');
    expect(() => checkUrlWithoutDns('http://169.254.169.254/', allowPrivate)).toThrow('cloud metadata address');
    expect(checkUrlWithoutDns('http://127.0.0.1:8080/', allowPrivate)).toBeNull();
    const resolving = (address: string) => async (): Promise<LookupAddress[]> => [{ address, family: 4 }];
    await expect(assertAllowedUrl('http://imds.example/', allowPrivate, resolving('169.254.169.254'))).rejects.toThrow(
      'url refused: imds.example resolves to 169.254.169.254, a cloud metadata address',
    );
    await expect(assertAllowedUrl('http://localhost:8080/', allowPrivate, resolving('127.0.0.1'))).resolves.toBeUndefined();
    const failing = async (): Promise<LookupAddress[]> => {
      throw new Error('ENOTFOUND');
    };
    await expect(assertAllowedUrl('http://later.internal/', allowPrivate, failing)).resolves.toBeUndefined();
  });
});

describe('checkUrlWithoutDns', () => {
  it('answers the host to resolve for names, nothing more for public IP literals', () => {
    expect(checkUrlWithoutDns('https://hooks.example.com/in')).toBe('hooks.example.com');
    expect(checkUrlWithoutDns('http://8.8.8.8:8080/x')).toBeNull();
    expect(checkUrlWithoutDns('https://[2606:4700:4700::1111]/x')).toBeNull();
  });

  it.each([
    ['ftp://example.com/x', 'http or https'],
    ['file:///etc/passwd', 'http or https'],
    ['javascript:alert(1)', 'http or https'],
    ['not a url', 'absolute http(s) URL'],
    ['https://user:pass@example.com/', 'credentials'],
    ['http://metadata.google.internal/computeMetadata/v1/', 'cloud metadata host'],
    ['http://METADATA.google.internal./', 'cloud metadata host'],
    ['http://169.254.169.254/latest/meta-data/', 'cloud metadata address'],
    ['http://127.0.0.1:3000/', 'url refused: 127.0.0.1 is a loopback address'],
    ['http://[::1]/', 'loopback'],
    ['http://[::ffff:7f00:1]/', 'loopback'],
    ['http://10.0.0.8/', 'private'],
    ['http://0.0.0.0/', 'unspecified'],
  ])('refuses %s', (url, reason) => {
    expect(() => checkUrlWithoutDns(url)).toThrow(UnsafeWebhookUrlError);
    expect(() => checkUrlWithoutDns(url)).toThrow(reason);
  });
});

describe('assertAllowedUrl', () => {
  const resolvingTo =
    (...addresses: string[]) =>
    async (): Promise<LookupAddress[]> =>
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  it('accepts a name resolving only to public addresses', async () => {
    await expect(assertAllowedUrl('https://hooks.example.com/', undefined, resolvingTo('93.184.215.14', '2606:2800::1'))).resolves.toBeUndefined();
  });

  it('refuses a name when any of its addresses is not public', async () => {
    await expect(assertAllowedUrl('https://sneaky.example.com/', undefined, resolvingTo('93.184.215.14', '10.0.0.5'))).rejects.toThrow(
      'url refused: sneaky.example.com resolves to 10.0.0.5, a private address',
    );
    await expect(assertAllowedUrl('http://localhost:8080/', undefined, resolvingTo('127.0.0.1'))).rejects.toThrow('loopback');
  });

  it('refuses a name that does not resolve', async () => {
    const failing = async (): Promise<LookupAddress[]> => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    await expect(assertAllowedUrl('https://nowhere.invalid/', undefined, failing)).rejects.toThrow('cannot be resolved');
  });
});

describe('createGuardedLookup (connect time)', () => {
  type Answer = { error?: Error; addresses?: LookupAddress[] };
  const fakeDns = (answer: Answer) =>
    ((_host: string, _options: unknown, callback: (error: Error | null, addresses: LookupAddress[]) => void) =>
      callback(answer.error ?? null, answer.addresses ?? [])) as never;

  function run(answer: Answer, all: boolean): Promise<{ error: Error | null; result: unknown; family?: number }> {
    const lookup = createGuardedLookup(undefined, fakeDns(answer));
    return new Promise((resolve) => lookup('hooks.example.com', { all }, (error, result, family) => resolve({ error, result, family })));
  }

  it('hands the socket the checked public addresses, in both callback forms', async () => {
    const addresses = [{ address: '93.184.215.14', family: 4 }];
    expect(await run({ addresses }, true)).toEqual({ error: null, result: addresses, family: undefined });
    expect(await run({ addresses }, false)).toEqual({ error: null, result: '93.184.215.14', family: 4 });
  });

  it('fails the connection when the name now resolves to a private address (DNS rebinding)', async () => {
    const outcome = await run({ addresses: [{ address: '93.184.215.14', family: 4 }, { address: '127.0.0.1', family: 4 }] }, true);
    expect(outcome.error).toBeInstanceOf(UnsafeWebhookUrlError);
    expect(outcome.error?.message).toBe('refused: hooks.example.com resolves to 127.0.0.1, a loopback address');
  });

  it('passes DNS errors through', async () => {
    const error = new Error('ENOTFOUND');
    expect((await run({ error }, true)).error).toBe(error);
  });
});
