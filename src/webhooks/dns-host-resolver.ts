import { lookup, Resolver } from 'node:dns/promises';
import { HOST_RESOLUTION_TIMEOUT_MS, type HostResolver, type ResolvedAddress } from '../domain/webhooks/webhook-url.js';

/**
 * Merchant-named hosts are asked of the name servers directly (c-ares), never tying up libuv's 4 shared threads on a
 * silent server; only "no address" or a refusal falls back to the system resolver (/etc/hosts, search domains, mDNS).
 */
const RESOLVER_TIMEOUT_MS = 2_000;

/** c-ares errors that mean "not known out there", not "the name server did not answer". */
const ASK_THE_SYSTEM = new Set([
  'ENOTFOUND',
  'ENODATA',
  'ENONAME',
  'ECONNREFUSED',
  'EREFUSED',
  'ESERVFAIL',
  'EBADNAME',
]);

async function addressesOf(resolver: Resolver, family: 4 | 6, host: string): Promise<ResolvedAddress[] | Error> {
  try {
    const addresses = family === 4 ? await resolver.resolve4(host) : await resolver.resolve6(host);
    return addresses.map((address) => ({ address, family }));
  } catch (error) {
    return error as Error;
  }
}

/**
 * A HostResolver: the name servers' IPv4 addresses, then IPv6 ones; the system resolver's (every address, in its
 * order) for a name they do not know. `servers`: the system's (/etc/resolv.conf) unless given.
 */
export function createHostResolver(options: { servers?: string[]; timeoutMs?: number } = {}): HostResolver {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? RESOLVER_TIMEOUT_MS, tries: 2 });
  if (options.servers) resolver.setServers(options.servers);
  return (host) => resolveHost(resolver, host);
}

/** The domain's HostResolver over the system's name servers (createHostResolver). */
export const resolveHostByDns: HostResolver = createHostResolver();

async function resolveHost(resolver: Resolver, host: string): Promise<ResolvedAddress[]> {
  // Loopback by definition (RFC 6761), and what a host without a reachable name server still resolves.
  if (/(^|\.)localhost\.?$/i.test(host)) return systemAddresses(host);
  const [v4, v6] = await Promise.all([addressesOf(resolver, 4, host), addressesOf(resolver, 6, host)]);
  const found = [...(Array.isArray(v4) ? v4 : []), ...(Array.isArray(v6) ? v6 : [])];
  if (found.length > 0) return found;
  const failures = [v4, v6].filter((answer): answer is Error => !Array.isArray(answer));
  const unanswered = failures.find((error) => !ASK_THE_SYSTEM.has((error as NodeJS.ErrnoException).code ?? ''));
  if (unanswered) throw unanswered;
  return oneSystemLookupAtATime(() => systemAddresses(host));
}

/**
 * The system resolver gets one merchant-named host at a time, at most FALLBACK_QUEUE waiting (more are refused), so a
 * name server that goes silent after "no such name" holds one of libuv's threads, not all of them.
 */
const FALLBACK_QUEUE = 8;
let systemLookupRunning: Promise<unknown> = Promise.resolve();
let systemLookupsWaiting = 0;

async function oneSystemLookupAtATime<T>(lookupNow: () => Promise<T>): Promise<T> {
  if (systemLookupsWaiting >= FALLBACK_QUEUE)
    throw Object.assign(new Error('too many host names waiting for the system resolver'), { code: 'EBUSY' });
  systemLookupsWaiting += 1;
  const previous = systemLookupRunning;
  const queuedAt = Date.now();
  const whenItsTurn = () => {
    if (Date.now() - queuedAt >= HOST_RESOLUTION_TIMEOUT_MS)
      return Promise.reject(Object.assign(new Error('gave up waiting for the system resolver'), { code: 'ETIMEOUT' }));
    return lookupNow();
  };
  const mine = previous.then(whenItsTurn, whenItsTurn);
  systemLookupRunning = mine.catch(() => undefined);
  try {
    return await mine;
  } finally {
    systemLookupsWaiting -= 1;
  }
}

async function systemAddresses(host: string): Promise<ResolvedAddress[]> {
  const entries = await lookup(host, { all: true, verbatim: true });
  return entries.map((entry) => ({ address: entry.address, family: entry.family as 4 | 6 }));
}
