import type { IncomingMessage } from 'node:http';
import { isIP, isIPv6 } from 'node:net';
import express, { type Request } from 'express';
import type { TrustProxySetting } from '../domain/organisations/request-guard-ports.js';

/**
 * The client's address as rate limits count it: with TRUST_PROXY (Express's `trust proxy`), the address the trusted
 * proxies put in X-Forwarded-For; else the TCP peer.
 */
export function clientAddressOf(req: Request): string {
  return addressKey(req.ip ?? req.socket.remoteAddress ?? '');
}

export type TrustFunction = (address: string, hop: number) => boolean;

/** Express's own compiled form of a `trust proxy` setting, for requests Express never sees (WebSocket upgrades). */
export function compileTrustProxy(setting: TrustProxySetting): TrustFunction {
  const app = express();
  app.set('trust proxy', typeof setting === 'object' ? [...setting] : setting);
  return app.get('trust proxy fn') as TrustFunction;
}

/**
 * The client's address of a raw request by Express's rule (proxy-addr): walk from the TCP peer back through
 * X-Forwarded-For while the hop is trusted; the first untrusted one is the client.
 */
export function upgradeClientAddress(req: IncomingMessage, trust: TrustFunction): string {
  const header = req.headers['x-forwarded-for'];
  // No proxy named anyone: the TCP peer is the client, whatever is trusted.
  if (header === undefined) return addressKey(req.socket.remoteAddress ?? '');
  const forwarded = (Array.isArray(header) ? header.join(',') : header)
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .reverse();
  const chain = [req.socket.remoteAddress ?? '', ...forwarded];
  let hop = 0;
  while (hop < chain.length - 1 && trust(chain[hop]!, hop)) hop++;
  return addressKey(chain[hop]!);
}

/**
 * IPv4 as it is (mapped IPv6 too); IPv6 by its /64, since one subscriber usually holds a whole /64 and could otherwise
 * step around any per-address limit; anything else cut to 64 characters.
 */
export function addressKey(address: string): string {
  let key = addressKeys.get(address);
  if (key === undefined) {
    if (addressKeys.size >= ADDRESS_KEYS_KEPT) addressKeys.clear();
    addressKeys.set(address, (key = computeAddressKey(address)));
  }
  return key;
}

// The same few addresses ask again and again: their keys are kept (bounded; the key of an address never changes).
const ADDRESS_KEYS_KEPT = 10_000;
const addressKeys = new Map<string, string>();

function computeAddressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  const bare = address.replace(/%.*$/, '');
  // Not an address at all (an X-Forwarded-For entry believed with TRUST_PROXY=true): bounded, as sent.
  if (!isIPv6(bare)) return isIP(address) ? address : address.slice(0, 64);
  const [head = '', tail = ''] = bare.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = bare.includes('::') ? (tail ? tail.split(':') : []) : [];
  // An embedded IPv4 tail (::1.2.3.4) is in the host half: it never reaches the /64.
  const groups = bare.includes('::')
    ? [...headGroups, ...Array(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups]
    : headGroups;
  return `${groups
    .slice(0, 4)
    .map((group) => parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}
