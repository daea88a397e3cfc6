import { lookup } from 'node:dns/promises';
import type { HostResolver } from '../domain/webhook-url.js';

/**
 * The domain's HostResolver over the system resolver (getaddrinfo, as a connection would
 * resolve the name): every address, in the order the system gives them.
 */
export const resolveHostByDns: HostResolver = async (host) => {
  const entries = await lookup(host, { all: true, verbatim: true });
  return entries.map((entry) => ({ address: entry.address, family: entry.family as 4 | 6 }));
};
