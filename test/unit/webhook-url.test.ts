import dgram from 'node:dgram';
import { lookup } from 'node:dns/promises';
import { describe, expect, it } from 'vitest';
import { isPublicAddress, resolveWebhookHost, webhookUrlProblems } from '../../src/domain/webhooks/webhook-url.js';
import { leaseMs, retryDelayMs } from '../../src/webhooks/dispatcher.js';
import { createHostResolver, resolveHostByDns } from '../../src/webhooks/dns-host-resolver.js';

describe('isPublicAddress (SSRF rule)', () => {
  it.each([
    '127.0.0.1',
    '10.0.0.1',
    '172.16.5.4',
    '172.31.255.255',
    '192.168.0.10',
    '169.254.169.254',
    '100.64.1.1',
    '0.0.0.0',
    '224.0.0.251',
    '255.255.255.255',
    '::',
    '::1',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '::127.0.0.1',
    '64:ff9b::7f00:1',
    // Found by an attacker-minded review: IPv4-translated, Teredo, documentation (RFC 9637), 5f00::/16, ORCHIDv2.
    '::ffff:0:7f00:1',
    '2001::1',
    '3fff::1',
    '5f00::1',
    '2001:20::1',
    'not an ip',
  ])('%s is not public', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '2a00:1450:4001::200e', '::ffff:8.8.8.8'])(
    '%s is public',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );
});

describe('webhook URLs', () => {
  it('must be http(s) without credentials', () => {
    expect(webhookUrlProblems('https://example.com/hook').problems).toEqual([]);
    expect(webhookUrlProblems('ftp://example.com').problems).toEqual(['url must use http or https']);
    expect(webhookUrlProblems('https://a:b@example.com').problems).toEqual(['url must not contain credentials']);
    expect(webhookUrlProblems('nope').problems).toEqual(['url must be an http(s) URL']);
    expect(webhookUrlProblems(42).problems).toEqual(['url must be an http(s) URL']);
  });

  it('refuses a literal private address unless allowed, and pins the literal', async () => {
    const resolve = (url: string, allowPrivate: boolean) =>
      resolveWebhookHost(new URL(url), allowPrivate, resolveHostByDns);
    await expect(resolve('http://[::ffff:127.0.0.1]:8080/', false)).rejects.toThrow(/not a public address/);
    await expect(resolve('http://localhost/', false)).rejects.toThrow(/not a public address/);
    await expect(resolve('http://127.0.0.1/', true)).resolves.toEqual({ address: '127.0.0.1', family: 4 });
    await expect(resolve('http://93.184.215.14/', false)).resolves.toEqual({ address: '93.184.215.14', family: 4 });
  });
});

describe('webhook hosts', () => {
  // Found by review: a name server that never answers held a registration (POST /webhook-endpoints) open.
  it('a host that does not resolve in time is refused with a clear problem, not waited for', async () => {
    const never = () => new Promise<never>(() => {});
    await expect(resolveWebhookHost(new URL('https://hook.example.com/'), false, never, 50)).rejects.toMatchObject({
      code: 'invalid',
      messages: ['url host hook.example.com could not be resolved within 0.05 s'],
    });
  });
});

describe('retry schedule', () => {
  const config = { retryBaseMs: 10_000, retryMaxMs: 3_600_000 };
  it('doubles from the base with full jitter, capped', () => {
    expect(retryDelayMs(1, config, () => 0.999999)).toBe(9_999);
    expect(retryDelayMs(2, config, () => 0.999999)).toBe(19_999);
    expect(retryDelayMs(5, config, () => 0.5)).toBe(80_000);
    expect(retryDelayMs(30, config, () => 0.999999)).toBe(3_599_996);
    expect(retryDelayMs(3, config, () => 0)).toBe(0);
  });

  it('leases a batch for a timeout plus the longer of a timeout and 5 s (renewed before each attempt)', () => {
    expect(leaseMs({ timeoutMs: 10_000 })).toBe(20_000);
    expect(leaseMs({ timeoutMs: 1_000 })).toBe(6_000);
  });
});

// Found by an attacker-minded review: webhook hosts were resolved with dns.lookup (getaddrinfo on libuv's 4 threads),
// and a merchant's name server that never answers held every thread for the system's whole wait (10 s and more), so
// another merchant's webhooks to `localhost` failed "could not be resolved within 5 s".
describe('webhook host resolution (src/webhooks/dns-host-resolver.ts)', () => {
  it('asks the name servers directly: a silent one times out and holds no thread the system resolver needs', async () => {
    const silent = dgram.createSocket('udp4');
    const asked: number[] = [];
    silent.on('message', () => asked.push(Date.now()));
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    try {
      const resolve = createHostResolver({ servers: [`127.0.0.1:${silent.address().port}`], timeoutMs: 500 });
      const started = Date.now();
      const pending = Array.from({ length: 8 }, (_, i) =>
        resolve(`merchant-${i}.example`).then(
          () => null,
          (e) => e,
        ),
      );
      // Meanwhile the system resolver (and so the thread pool) answers at once, eight times over.
      const local = await Promise.all(Array.from({ length: 8 }, () => lookup('localhost')));
      expect(local.every((entry) => entry.address === '127.0.0.1' || entry.address === '::1')).toBe(true);
      expect(Date.now() - started).toBeLessThan(400);
      const outcomes = await Promise.all(pending);
      expect(outcomes.map((error) => (error as NodeJS.ErrnoException | null)?.code)).toEqual(
        Array.from({ length: 8 }, () => 'ETIMEOUT'),
      );
      expect(asked.length).toBeGreaterThanOrEqual(8);
      // localhost is the system's to answer, whatever the name servers do.
      expect((await resolve('localhost')).length).toBeGreaterThan(0);
    } finally {
      silent.close();
    }
  });
});
