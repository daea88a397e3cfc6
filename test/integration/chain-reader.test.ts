import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChainReader, UNREACHABLE_PAUSE_MS } from '../../src/chain/chain-reader.js';
import { localNetwork } from '../support/chain.js';

/**
 * A bind asks the chain once, with no retries, and an RPC that fails is left alone for a
 * moment: during an outage a bind answers at once (kept as an unverified candidate) instead
 * of every payer waiting for retries and the server building errors. Against a real HTTP
 * server that fails every JSON-RPC call and counts them.
 */
let server: Server;
let url: string;
let requests = 0;

beforeAll(async () => {
  server = createServer((request, response) => {
    requests += 1;
    request.resume();
    response.writeHead(503, { 'content-type': 'text/plain' }).end('down');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('the chain as binds see it', () => {
  it('asks a failing RPC once, then not again until the pause is over', async () => {
    let now = 1_000_000;
    const reader = createChainReader([{ ...localNetwork(url), rpcUrls: [url] }], 2_000, () => now);
    const hash = `0x${'12'.repeat(32)}`;
    expect(await reader.evidence('local', hash)).toBeNull();
    expect(requests).toBe(1);
    now += UNREACHABLE_PAUSE_MS - 1;
    expect(await reader.evidence('local', hash)).toBeNull();
    expect(requests).toBe(1);
    now += 1;
    expect(await reader.evidence('local', hash)).toBeNull();
    expect(requests).toBe(2);
  });
});
