import { isLoopbackOnly } from './deployment.js';

/**
 * Whether `url` travels in the clear to another machine (http or ws to a non-loopback host). Production asks RPC nodes
 * and rates sources over https or wss only: a forged log marks a session paid, a forged price changes every quote.
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
