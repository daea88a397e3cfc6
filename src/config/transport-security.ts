import { isLoopbackOnly } from './deployment.js';

/**
 * Whether `url` travels in the clear to another machine: http or ws to a host that is not loopback. In production
 * Kassa trusts what RPC nodes and rates sources answer (a forged log marks a session paid, a forged price changes
 * every quote), so it asks them over https or wss only (found by a review: plain http started silently).
 */
export function inTheClearOffThisMachine(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false; // refused as malformed elsewhere
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'ws:') return false;
  return !isLoopbackOnly(parsed.hostname);
}
