import net from 'node:net';
import { DomainError, invalid } from '../shared/errors.js';

/**
 * SSRF guard of webhook URLs (docs/api/webhooks.md#webhooks): http(s) only, no credentials, and unless configured
 * otherwise no address that is not public.
 */

const blocked = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['3fff::', 20],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(prefix, bits, 'ipv6');
}

/**
 * IPv6 is allowed, not blocked: only global unicast (2000::/3) outside the special-purpose blocks above, so anything
 * else (::ffff:0:0/96, 5f00::/16, ranges assigned later) is no public host.
 */
const globalUnicast = new net.BlockList();
globalUnicast.addSubnet('2000::', 3, 'ipv6');

/** Whether an IP address (v4 or v6 text) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return !blocked.check(address, 'ipv4');
  if (family !== 6) return false;
  const mapped = embeddedIpv4(address);
  if (mapped !== null) return !blocked.check(mapped, 'ipv4');
  return globalUnicast.check(address, 'ipv6') && !blocked.check(address, 'ipv6');
}

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d) or IPv4-compatible (::a.b.c.d) IPv6 address. */
function embeddedIpv4(address: string): string | null {
  const groups = expandIpv6(address);
  if (!groups) return null;
  const zeros = groups.slice(0, 5).every((group) => group === 0);
  if (!zeros || (groups[5] !== 0xffff && groups[5] !== 0)) return null;
  if (groups[5] === 0 && groups[6] === 0) return null; // :: and ::1 are checked as IPv6
  return [groups[6]! >> 8, groups[6]! & 255, groups[7]! >> 8, groups[7]! & 255].join('.');
}

function expandIpv6(address: string): number[] | null {
  let text = address.toLowerCase().split('%')[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const parts = dotted[1]!.split('.').map(Number);
    text =
      text.slice(0, -dotted[1]!.length) +
      `${((parts[0]! << 8) | parts[1]!).toString(16)}:${((parts[2]! << 8) | parts[3]!).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const fill = tail === undefined ? 0 : 8 - left.length - right.length;
  if (fill < 0) return null;
  const groups = [...left, ...Array(fill).fill('0'), ...right].map((group) => parseInt(group, 16));
  return groups.length === 8 && groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff)
    ? groups
    : null;
}

/** Syntax rules of a webhook URL; returns the normalised URL or the problems. */
export function webhookUrlProblems(value: unknown, field = 'url'): { url: URL | null; problems: string[] } {
  if (typeof value !== 'string' || value.length === 0)
    return { url: null, problems: [`${field} must be an http(s) URL`] };
  if (value.length > 2048) return { url: null, problems: [`${field} must be at most 2048 characters`] };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { url: null, problems: [`${field} must be an http(s) URL`] };
  }
  const problems: string[] = [];
  if (url.protocol !== 'http:' && url.protocol !== 'https:') problems.push(`${field} must use http or https`);
  if (url.username || url.password) problems.push(`${field} must not contain credentials`);
  if (!url.hostname) problems.push(`${field} must name a host`);
  return { url, problems };
}

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/**
 * Every address a host name resolves to, in the resolver's order; throws when it cannot be
 * resolved. A port: DNS is asked outside the domain (src/webhooks/dns-host-resolver.ts).
 */
export type HostResolver = (host: string) => Promise<ResolvedAddress[]>;

/** The host without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** How long a host name may take to resolve: a name server that never answers is a clear 400, not a hang. */
export const HOST_RESOLUTION_TIMEOUT_MS = 5_000;

/**
 * Resolves the host once within `timeoutMs`; without `allowPrivate`, refuses if any address is not public, so DNS
 * cannot pick a private one later. The caller connects to the returned address; an IP literal is taken as it is.
 */
export async function resolveWebhookHost(
  url: URL,
  allowPrivate: boolean,
  resolveHost: HostResolver,
  timeoutMs = HOST_RESOLUTION_TIMEOUT_MS,
): Promise<ResolvedAddress> {
  const host = hostOf(url);
  const literal = net.isIP(host);
  let addresses: ResolvedAddress[];
  if (literal) {
    addresses = [{ address: host, family: literal as 4 | 6 }];
  } else {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timed out'>((resolve) => {
      timer = setTimeout(() => resolve('timed out'), timeoutMs);
    });
    try {
      const answer = await Promise.race([resolveHost(host), timedOut]);
      if (answer === 'timed out')
        throw invalid([`url host ${host} could not be resolved within ${timeoutMs / 1000} s`]);
      addresses = answer;
    } catch (error) {
      if (error instanceof DomainError) throw error;
      throw invalid([`url host ${host} could not be resolved`]);
    } finally {
      clearTimeout(timer);
    }
  }
  if (addresses.length === 0) throw invalid([`url host ${host} could not be resolved`]);
  if (!allowPrivate) {
    const refused = addresses.find((entry) => !isPublicAddress(entry.address));
    if (refused)
      throw invalid([
        `url resolves to ${refused.address}, which is not a public address (private, loopback and link-local ` +
          `addresses are refused)`,
      ]);
  }
  return addresses[0]!;
}
