import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { EnvReader } from '../../src/config/env-reader.js';
import { DEFAULT_RATE_LIMITS, readRequestGuardConfig } from '../../src/config/request-guard.js';
import { MemoryRateLimitCounters } from '../../src/db/organisations/request-guard.store.js';
import { RateLimitedError, Throttle, type RateLimitRules } from '../../src/domain/organisations/throttle.js';
import { addressKey, compileTrustProxy, upgradeClientAddress } from '../../src/http/client-address.js';

/** Issue 11 B: the limiter's rules, its configuration and whose address counts. */

function config(env: Record<string, string>) {
  const problems: string[] = [];
  return { config: readRequestGuardConfig(new EnvReader(env, problems)), problems };
}

const OFF: RateLimitRules = {
  auth_failures: null,
  auth_failures_key: null,
  create: null,
  bind_session: null,
  bind_address: null,
  graphql: null,
  websocket: null,
  qr: null,
  link_sessions: null,
  unknown_sessions: null,
  refund_claims: null,
};

describe('KASSA_RATE_LIMIT_<NAME>', () => {
  it('defaults: 20 failed signature checks per address and 60 per key id, creates in bursts of 1000 at 100 a second, 20 binds per session, 60 per address, 600 GraphQL operations, 60 WebSocket connections, 120 QR codes, 30 payment-link visits, 60 reads of unknown sessions — per minute', () => {
    expect(config({}).config.rateLimits).toEqual({
      auth_failures: { limit: 20, windowSeconds: 60 },
      auth_failures_key: { limit: 60, windowSeconds: 60 },
      create: { limit: 1000, windowSeconds: 10 },
      bind_session: { limit: 20, windowSeconds: 60 },
      bind_address: { limit: 60, windowSeconds: 60 },
      graphql: { limit: 600, windowSeconds: 60 },
      websocket: { limit: 60, windowSeconds: 60 },
      qr: { limit: 120, windowSeconds: 60 },
      link_sessions: { limit: 30, windowSeconds: 60 },
      unknown_sessions: { limit: 60, windowSeconds: 60 },
      refund_claims: { limit: 30, windowSeconds: 60 },
    });
    expect(config({}).config.rateLimits).toEqual(DEFAULT_RATE_LIMITS);
  });

  it.each([
    ['20/1m', { limit: 20, windowSeconds: 60 }],
    ['5/10s', { limit: 5, windowSeconds: 10 }],
    ['1000/1h', { limit: 1000, windowSeconds: 3600 }],
    ['7 / 30S', { limit: 7, windowSeconds: 30 }],
    ['off', null],
    ['OFF', null],
  ])('reads %j', (value, rule) => {
    const { config: read, problems } = config({ KASSA_RATE_LIMIT_CREATE: value });
    expect(problems).toEqual([]);
    expect(read.rateLimits.create).toEqual(rule);
  });

  it.each(['20', '20/60', '0/1m', '-1/1m', '20/0s', '20/25h', 'x/1m', '20/1d', '1.5/1m'])(
    'refuses %j, naming the variable',
    (value) => {
      const { problems } = config({ KASSA_RATE_LIMIT_BIND_SESSION: value });
      expect(problems).toEqual([
        `KASSA_RATE_LIMIT_BIND_SESSION must be <count>/<window> such as 20/1m, 5/10s or 1000/1h (count ≥ 1, window 1s to 24h), or off (got "${value}")`,
      ]);
    },
  );
});

describe('TRUST_PROXY', () => {
  it.each([
    [undefined, false],
    ['false', false],
    ['0', false],
    ['true', true],
    ['2', 2],
    ['loopback', ['loopback']],
    ['10.0.0.0/8, 192.168.1.1 ,fd00::/8,uniquelocal', ['10.0.0.0/8', '192.168.1.1', 'fd00::/8', 'uniquelocal']],
    ['10.0.0.0/255.0.0.0', ['10.0.0.0/255.0.0.0']],
  ])('reads %j as %j', (value, expected) => {
    const { config: read, problems } = config(value === undefined ? {} : { TRUST_PROXY: value });
    expect(problems).toEqual([]);
    expect(read.trustProxy).toEqual(expected);
  });

  it.each(['10.0.0.300', 'proxy.example.com', '10.0.0.0/33', 'fd00::/129', '101'])('refuses %j', (value) => {
    const { problems } = config({ TRUST_PROXY: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^TRUST_PROXY must be false, true, a hop count/);
  });
});

describe('Throttle (fixed windows)', () => {
  const T0 = Date.UTC(2026, 10, 23, 12, 0, 0);
  const at = (ms: number) => new Date(T0 + ms);

  it('allows `limit` hits per window, then refuses with the seconds left; the next window starts afresh', async () => {
    const throttle = new Throttle(new MemoryRateLimitCounters(), { ...OFF, qr: { limit: 2, windowSeconds: 60 } });
    await throttle.consume([['qr', 'a-1']], at(0));
    await throttle.consume([['qr', 'a-1']], at(10_000));
    const refused = await throttle.consume([['qr', 'a-1']], at(20_500)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect(refused).toMatchObject({ code: 'rate_limited', limit: 'qr', retryAfterSeconds: 40 });
    expect((refused as Error).message).toBe(
      'Too many QR codes from this address: at most 2 per 60 s; retry after 40 s',
    );
    // Another subject has its own count.
    await throttle.consume([['qr', 'a-2']], at(21_000));
    await throttle.consume([['qr', 'a-1']], at(60_000));
  });

  it('a subject known to be over is refused without counting, until its window ends', async () => {
    let hits = 0;
    const counting = new MemoryRateLimitCounters();
    const throttle = new Throttle(
      { hit: (list, now) => ((hits += list.length), counting.hit(list, now)) },
      { ...OFF, qr: { limit: 1, windowSeconds: 10 } },
    );
    await throttle.consume([['qr', 'a']], at(0));
    await expect(throttle.consume([['qr', 'a']], at(1_000))).rejects.toBeInstanceOf(RateLimitedError);
    expect(hits).toBe(2);
    await expect(throttle.consume([['qr', 'a']], at(3_000))).rejects.toMatchObject({ retryAfterSeconds: 7 });
    expect(hits).toBe(2);
    await throttle.consume([['qr', 'a']], at(10_000));
    expect(hits).toBe(3);
  });

  it('counts at once, without a promise, when the counters count in memory; otherwise answers with a promise', async () => {
    const memory = new Throttle(new MemoryRateLimitCounters(), { ...OFF, qr: { limit: 2, windowSeconds: 10 } });
    expect(memory.count([['qr', 'a']], at(0))).toBeUndefined();
    expect(memory.count([['qr', 'a']], at(1))).toBeUndefined();
    expect(() => memory.count([['qr', 'a']], at(2))).toThrow(RateLimitedError);
    // Counters that must ask their store (no hitInMemory, or it declines): a promise, refusing over the limit.
    const store = new MemoryRateLimitCounters();
    const asking = new Throttle(
      { hit: (list, now) => store.hit(list, now), hitInMemory: () => undefined },
      { ...OFF, qr: { limit: 1, windowSeconds: 10 } },
    );
    const first = asking.count([['qr', 'b']], at(0));
    expect(first).toBeInstanceOf(Promise);
    await first;
    await expect(asking.count([['qr', 'b']], at(1))).rejects.toBeInstanceOf(RateLimitedError);
  });

  it('a limit that is off counts nothing; refusals are reported by limit', async () => {
    let hits = 0;
    const throttle = new Throttle(
      { hit: async (list) => ((hits += list.length), list.map(() => 99)) },
      { ...OFF, graphql: { limit: 1, windowSeconds: 1 } },
    );
    const refused: string[] = [];
    throttle.onRefusal((limit) => refused.push(limit));
    await throttle.consume([['create', 'k']], at(0));
    expect(hits).toBe(0);
    await expect(throttle.consume([['graphql', '1.2.3.4']], at(0))).rejects.toThrow(
      /^Too many GraphQL operations from this address: at most 1 per 1 s; retry after 1 s$/,
    );
    expect(refused).toEqual(['graphql']);
  });
});

describe('Throttle (token buckets: the create limit)', () => {
  const T0 = Date.UTC(2026, 10, 23, 12, 0, 0);
  const at = (ms: number) => new Date(T0 + ms);

  it('a full bucket lets `limit` through at once, then one per window / limit; a refused request takes nothing', async () => {
    const throttle = new Throttle(new MemoryRateLimitCounters(), { ...OFF, create: { limit: 3, windowSeconds: 60 } });
    for (let i = 0; i < 3; i++) await throttle.consume([['create', 'key-1']], at(0));
    const refused = await throttle.consume([['create', 'key-1']], at(5_000)).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'rate_limited', limit: 'create', retryAfterSeconds: 15 });
    expect((refused as Error).message).toBe(
      'Too many checkout sessions created with this API key: at most 3 per 60 s, in bursts of up to 3; retry after ' +
        '15 s (the operator of this Kassa raises the limit with KASSA_RATE_LIMIT_CREATE)',
    );
    // One token back every 20 s; the refusals meanwhile took none.
    await throttle.consume([['create', 'key-1']], at(20_000));
    await expect(throttle.consume([['create', 'key-1']], at(20_001))).rejects.toMatchObject({
      retryAfterSeconds: 20,
    });
    await throttle.consume([['create', 'key-2']], at(20_001));
    // Idle for a whole window: full again, never more than full.
    for (let i = 0; i < 3; i++) await throttle.consume([['create', 'key-1']], at(200_000));
    await expect(throttle.consume([['create', 'key-1']], at(200_000))).rejects.toBeInstanceOf(RateLimitedError);
  });

  it('the default, 1000/10s: 1000 at once, then 100 a second', async () => {
    const { config: read } = config({});
    const throttle = new Throttle(new MemoryRateLimitCounters(), { ...OFF, create: read.rateLimits.create });
    for (let i = 0; i < 1000; i++) await throttle.consume([['create', 'k']], at(0));
    await expect(throttle.consume([['create', 'k']], at(0))).rejects.toMatchObject({ retryAfterSeconds: 1 });
    for (let i = 0; i < 100; i++) await throttle.consume([['create', 'k']], at(1_000));
    await expect(throttle.consume([['create', 'k']], at(1_000))).rejects.toBeInstanceOf(RateLimitedError);
  });
});

describe('whose address counts', () => {
  it('IPv4 as it is (also IPv4-mapped IPv6); IPv6 by its /64', () => {
    expect(addressKey('203.0.113.9')).toBe('203.0.113.9');
    expect(addressKey('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(addressKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0DB8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressKey('x'.repeat(5000))).toBe('x'.repeat(64));
  });

  const upgrade = (peer: string, forwardedFor?: string) =>
    ({
      socket: { remoteAddress: peer },
      headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
    }) as unknown as IncomingMessage;

  it('a WebSocket upgrade follows Express’s rule for X-Forwarded-For', () => {
    expect(upgradeClientAddress(upgrade('127.0.0.1', '203.0.113.1'), compileTrustProxy(false))).toBe('127.0.0.1');
    expect(
      upgradeClientAddress(upgrade('127.0.0.1', '198.51.100.7, 203.0.113.1'), compileTrustProxy(['loopback'])),
    ).toBe('203.0.113.1');
    expect(upgradeClientAddress(upgrade('10.0.0.5', '203.0.113.1'), compileTrustProxy(['loopback']))).toBe('10.0.0.5');
    expect(upgradeClientAddress(upgrade('127.0.0.1', '198.51.100.7, 10.0.0.2'), compileTrustProxy(2))).toBe(
      '198.51.100.7',
    );
    expect(upgradeClientAddress(upgrade('127.0.0.1', '198.51.100.7, 10.0.0.2'), compileTrustProxy(true))).toBe(
      '198.51.100.7',
    );
    expect(upgradeClientAddress(upgrade('127.0.0.1'), compileTrustProxy(true))).toBe('127.0.0.1');
  });
});
