import { isIP } from 'node:net';
import type { TrustProxySetting } from '../domain/organisations/request-guard-ports.js';
import {
  RATE_LIMIT_NAMES,
  rateLimitVariable,
  type RateLimitName,
  type RateLimitRule,
  type RateLimitRules,
} from '../domain/organisations/throttle.js';
import type { EnvReader } from './env-reader.js';

/** Rate limits and the client-address rule (docs/api/rest.md#rate-limits). */
export interface RequestGuardConfig {
  /** TRUST_PROXY: which proxies' X-Forwarded-For to believe when telling the client's address. */
  readonly trustProxy: TrustProxySetting;
  /** KASSA_RATE_LIMIT_<NAME>: `<count>/<window>` or `off`. */
  readonly rateLimits: RateLimitRules;
}

/** Defaults: far above what a merchant, a payer or the checkout page sends; far below a flood. */
export const DEFAULT_RATE_LIMITS: Record<RateLimitName, RateLimitRule> = {
  auth_failures: { limit: 20, windowSeconds: 60 },
  // A key's own failing integration tests stay far below; a flood naming the key from many addresses does not.
  auth_failures_key: { limit: 60, windowSeconds: 60 },
  // A token bucket (BUCKET_LIMITS): 100 a second per key, with bursts of 1000 (a flash sale).
  create: { limit: 1000, windowSeconds: 10 },
  bind_session: { limit: 20, windowSeconds: 60 },
  bind_address: { limit: 60, windowSeconds: 60 },
  graphql: { limit: 600, windowSeconds: 60 },
  websocket: { limit: 60, windowSeconds: 60 },
  qr: { limit: 120, windowSeconds: 60 },
  // A payer starts one session per visit; a few retries and a family on one address stay far below.
  link_sessions: { limit: 30, windowSeconds: 60 },
  // A page or a merchant reads ids it was given; a typo or two stay far below, a scan of made-up ids does not.
  unknown_sessions: { limit: 60, windowSeconds: 60 },
  // A payer opens a claim link a few times and sends one address; guessing refund ids is far above.
  refund_claims: { limit: 30, windowSeconds: 60 },
};

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600 };
const MAX_WINDOW_SECONDS = 86_400;
const MAX_LIMIT = 1_000_000_000;

export function readRequestGuardConfig(read: EnvReader): RequestGuardConfig {
  const rateLimits = Object.fromEntries(
    RATE_LIMIT_NAMES.map((name) => [name, readRule(read, rateLimitVariable(name), DEFAULT_RATE_LIMITS[name])]),
  ) as Record<RateLimitName, RateLimitRule | null>;
  return { trustProxy: readTrustProxy(read), rateLimits };
}

/** `20/1m`, `5/10s`, `1000/1h` (count per window), or `off`. */
function readRule(read: EnvReader, name: string, fallback: RateLimitRule): RateLimitRule | null {
  const value = read.optional(name);
  if (value === null) return fallback;
  if (value.toLowerCase() === 'off') return null;
  const match = /^(\d+)\s*\/\s*(\d+)\s*([smh])$/i.exec(value);
  const limit = match ? Number(match[1]) : 0;
  const windowSeconds = match ? Number(match[2]) * UNIT_SECONDS[match[3]!.toLowerCase()]! : 0;
  if (!match || limit < 1 || limit > MAX_LIMIT || windowSeconds < 1 || windowSeconds > MAX_WINDOW_SECONDS) {
    read.problems.push(
      `${name} must be <count>/<window> such as 20/1m, 5/10s or 1000/1h (count ≥ 1, window 1s to 24h), or off (got ` +
        `"${value}")`,
    );
    return fallback;
  }
  return { limit, windowSeconds };
}

const SUBNET_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * TRUST_PROXY: false (default), true, a hop count, or a comma-separated list of addresses, subnets (CIDR) and
 * loopback/linklocal/uniquelocal.
 */
function readTrustProxy(read: EnvReader): TrustProxySetting {
  const value = read.optional('TRUST_PROXY');
  if (value === null || ['false', '0', 'no', 'off'].includes(value.toLowerCase())) return false;
  if (['true', 'yes', 'on'].includes(value.toLowerCase())) return true;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops <= 100) return hops;
  }
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const wrong = entries.filter((entry) => !isTrustEntry(entry));
  if (entries.length === 0 || wrong.length > 0) {
    read.problems.push(
      `TRUST_PROXY must be false, true, a hop count (1–100) or a comma-separated list of addresses, CIDR subnets and ` +
        `loopback, linklocal, uniquelocal (not ${wrong.map((w) => `"${w}"`).join(', ') || `"${value}"`})`,
    );
    return false;
  }
  return entries;
}

function isTrustEntry(entry: string): boolean {
  if (SUBNET_NAMES.includes(entry.toLowerCase())) return true;
  const [address, bits, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  // A mask as a prefix length, or (IPv4) dotted.
  if (/^\d+$/.test(bits)) return Number(bits) <= (family === 4 ? 32 : 128);
  return family === 4 && isIP(bits) === 4;
}
