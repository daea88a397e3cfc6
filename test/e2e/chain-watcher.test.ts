import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChainWatchers } from '../../src/chain/chain-watcher.js';
import { PACKAGE_ROOT } from '../../src/config.js';
import { createLogger } from '../../src/logging.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant } from '../factories/merchant.js';
import {
  startChainKassa,
  startRpcProxy,
  startTestChain,
  WATCH_SETTINGS,
  type ChainKassa,
  type RpcProxy,
  type TestChain,
} from '../support/chain.js';
import { createSession, postBind } from '../support/rest-kassa.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

/**
 * The watcher's robustness against real anvil: providers that refuse large
 * ranges, a scanner dying mid-range, two instances on one database, and a
 * registry that does not match the chain.
 */

let chain: TestChain;
beforeAll(async () => {
  chain = await startTestChain();
}, 60_000);
afterAll(async () => {
  await chain?.stop();
});

const randomWallet = () => `0x${randomBytes(20).toString('hex')}`;

async function sessionOn(node: ChainKassa, wallet: string) {
  const merchant = await createMerchant(node.kassa.ctx, { wallet });
  const session = await createSession(node.kassa, merchant, checkoutRequest());
  const usdt = (session.crypto_options as Array<{ ticker: string; amount: string }>).find(
    (o) => o.ticker === 'USDT',
  )!.amount;
  return { id: session.session_id as string, usdt };
}

/**
 * Pays `count` sessions in USDT, one block each, exactly their amount and without a bind:
 * only the scanner can find these payments. Returns the session ids and hashes.
 */
async function payMany(node: ChainKassa, count: number) {
  const paid: Array<{ id: string; hash: string }> = [];
  for (let i = 0; i < count; i += 1) {
    const wallet = randomWallet();
    const session = await sessionOn(node, wallet);
    const sent = await chain.pay(wallet, 'USDT', session.usdt, { from: 2 + (i % 8) });
    paid.push({ id: session.id, hash: sent.hash });
  }
  return paid;
}

async function countRows(node: ChainKassa, ids: readonly string[]) {
  const [row] = await node.kassa.runtime.db.prisma.$queryRaw<
    Array<{ payments: number; paid: number; paid_events: number }>
  >`
    SELECT (SELECT count(*)::int FROM payments WHERE session_id::text = ANY(${ids})) AS payments,
           (SELECT count(*)::int FROM checkout_sessions WHERE id::text = ANY(${ids}) AND status = 'paid') AS paid,
           (SELECT count(*)::int FROM outbox_events WHERE session_id::text = ANY(${ids}) AND type = 'checkout_session.paid') AS paid_events`;
  return row!;
}

describe('a provider that refuses large eth_getLogs ranges', () => {
  let proxy: RpcProxy;
  let node: ChainKassa;
  beforeAll(async () => {
    proxy = await startRpcProxy(chain.url);
    // Starts at the head: only the blocks of this test are scanned.
    node = await startChainKassa(proxy.url, { settings: { backfillBlocks: 0 } });
    await node.watchers.tick();
  });
  afterAll(async () => {
    await node?.close();
    await proxy?.close();
  });

  it('splits the range until the provider accepts it, and misses nothing', async () => {
    const refused: string[] = [];
    proxy.intercept = ({ method, params }) => {
      if (method !== 'eth_getLogs') return undefined;
      const filter = params[0] as { fromBlock: string; toBlock: string };
      const span = BigInt(filter.toBlock) - BigInt(filter.fromBlock) + 1n;
      if (span <= 2n) return undefined;
      refused.push(`${BigInt(filter.fromBlock)}-${BigInt(filter.toBlock)}`);
      return { code: -32005, message: 'query returned more than 10000 results' };
    };
    const paid = await payMany(node, 5);
    await node.watchers.tick();
    expect(refused.length).toBeGreaterThan(0);
    expect(
      await countRows(
        node,
        paid.map((p) => p.id),
      ),
    ).toEqual({ payments: 5, paid: 5, paid_events: 5 });
  });
});

describe("a reorganisation between reading a range's logs and its end block", () => {
  let proxy: RpcProxy;
  let node: ChainKassa;
  beforeAll(async () => {
    proxy = await startRpcProxy(chain.url);
    node = await startChainKassa(proxy.url, { settings: { backfillBlocks: 0 } });
    await node.watchers.tick();
  });
  afterAll(async () => {
    await node?.close();
    await proxy?.close();
  });

  it("does not record the range over the old branch's logs: the payment on the new branch is found", async () => {
    const wallet = randomWallet();
    const session = await sessionOn(node, wallet);
    await node.watchers.tick();
    // The old branch: one block without the payment, which the scanner's eth_getLogs reads ...
    const fork = await chain.snapshot();
    await chain.mine(1);
    let reorganised = false;
    proxy.afterAnswer = async (calls) => {
      if (reorganised || !calls.some((call) => call.method === 'eth_getLogs')) return;
      reorganised = true;
      // ... and, before the scanner reads the range's end, the new branch: that block again, with the payment.
      await chain.revert(fork);
      await chain.pay(wallet, 'USDT', session.usdt, { from: 3 });
    };
    await node.watchers.tick();
    expect(reorganised).toBe(true);
    proxy.afterAnswer = undefined;
    await chain.mine(2);
    await node.watchers.tick();
    await node.watchers.tick();
    expect((await node.kassa.http.get(`/checkout-sessions/${session.id}`)).body).toMatchObject({
      status: 'paid',
      total_amount_crypto: session.usdt,
    });
  });
});

describe('a reorganisation below the newest recorded block', () => {
  let node: ChainKassa;
  beforeAll(async () => {
    node = await startChainKassa(chain.url, { settings: { backfillBlocks: 0 } });
    await node.watchers.tick();
  });
  afterAll(async () => {
    await node?.close();
  });

  it('rescans every block above the newest recorded block that still matches: a payment in between is found', async () => {
    const wallet = randomWallet();
    const session = await sessionOn(node, wallet);
    await node.watchers.tick(); // records the range's end, which stays on the chain
    await chain.mine(1);
    const fork = await chain.snapshot();
    await chain.mine(2);
    await node.watchers.tick(); // records the new end, two blocks above the fork
    // The two blocks after the fork are replaced by a longer branch whose first block holds the payment.
    await chain.revert(fork);
    await chain.pay(wallet, 'USDT', session.usdt, { from: 4 });
    await chain.mine(3);
    await node.watchers.tick();
    await node.watchers.tick();
    expect((await node.kassa.http.get(`/checkout-sessions/${session.id}`)).body).toMatchObject({
      status: 'paid',
      total_amount_crypto: session.usdt,
    });
  });
});

describe('a scanner killed mid-range', () => {
  it('loses and duplicates nothing when another instance takes over', async () => {
    const proxy = await startRpcProxy(chain.url);
    const database = await createTestDatabase();
    // One block per range, so there are many ranges to die in.
    const settings = { maxBlocksPerRange: 1, leaseSeconds: 1 };
    const first = await startChainKassa(proxy.url, { database, settings });
    const second = await startChainKassa(chain.url, { database, settings });
    try {
      await second.watchers.stop(); // started for its database handle only; the take-over below is a fresh watcher
      await first.watchers.tick(); // the first instance leads and is up to date
      const paid = await payMany(first, 6);

      // From the third new range on, the connection is cut while the range is fetched: after its logs, before it is recorded
      // (every time, so the RPC client's retry cannot save it). Block headers asked before that: the reorg check (1),
      // then per range the block of its transfer (for its time) and the range end (2 + 2).
      let headers = 0;
      proxy.intercept = ({ method, params }) =>
        method === 'eth_getBlockByNumber' && params[1] === false && ++headers >= 6 ? 'cut' : undefined;
      await first.watchers.tick();
      const partial = await countRows(
        first,
        paid.map((p) => p.id),
      );
      expect(partial.payments).toBeGreaterThan(0);
      expect(partial.payments).toBeLessThan(6);

      // The first instance is gone (never ticks again); a restarted one waits out its lease and carries on.
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      const restarted = startChainWatchers(
        second.kassa.ctx,
        { ...WATCH_SETTINGS, ...settings },
        createLogger('silent'),
      );
      await restarted.tick();
      await restarted.stop();
      expect(
        await countRows(
          second,
          paid.map((p) => p.id),
        ),
      ).toEqual({ payments: 6, paid: 6, paid_events: 6 });
    } finally {
      await first.close();
      await second.close();
      await database.drop();
      await proxy.close();
    }
  });
});

describe('two instances on one database', () => {
  let database: TestDatabase;
  let a: ChainKassa;
  let b: ChainKassa;
  beforeAll(async () => {
    database = await createTestDatabase();
    // A short lease, so leadership changes hands while they run.
    a = await startChainKassa(chain.url, { database, settings: { leaseSeconds: 2 } });
    b = await startChainKassa(chain.url, { database, settings: { leaseSeconds: 2 } });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  it('credit each transfer exactly once while both tick at the same time', async () => {
    const paid: Array<{ id: string; hash: string }> = [];
    for (let round = 0; round < 4; round += 1) {
      paid.push(...(await payMany(round % 2 ? a : b, 3)));
      await Promise.all([a.watchers.tick(), b.watchers.tick(), a.watchers.tick(), b.watchers.tick()]);
      if (round === 1) await new Promise((resolve) => setTimeout(resolve, 2_100)); // the lease lapses once
    }
    await Promise.all([a.watchers.tick(), b.watchers.tick()]);
    expect(
      await countRows(
        a,
        paid.map((p) => p.id),
      ),
    ).toEqual({ payments: 12, paid: 12, paid_events: 12 });
    const history = await a.kassa.runtime.db.prisma.$queryRaw<Array<{ n: number }>>`
      SELECT count(*)::int AS n FROM checkout_session_status_history WHERE session_id::text = ANY(${paid.map((p) => p.id)}) AND to_status = 'paid'`;
    expect(history[0]!.n).toBe(12);
  });

  it('a scanner whose cursor moved meanwhile writes nothing (compare-and-set)', async () => {
    const ledger = a.kassa.ctx.store.chain;
    const [cursor] = await a.kassa.runtime.db.prisma.$queryRaw<Array<{ next_block: bigint; leader: string }>>`
      SELECT next_block, leader FROM chain_cursors WHERE network = 'local'`;
    const stale = await ledger.recordRange(
      {
        network: 'local',
        chainId: '31337',
        fromBlock: cursor!.next_block - 1n,
        toBlock: cursor!.next_block,
        toBlockHash: '0x00',
        transfers: [],
      },
      cursor!.leader,
      () => null,
      new Date(),
    );
    expect(stale).toBe(false);
    const notLeader = await ledger.recordRange(
      {
        network: 'local',
        chainId: '31337',
        fromBlock: cursor!.next_block,
        toBlock: cursor!.next_block,
        toBlockHash: '0x00',
        transfers: [],
      },
      'someone-else',
      () => null,
      new Date(),
    );
    expect(notLeader).toBe(false);
    const [after] = await a.kassa.runtime.db.prisma.$queryRaw<
      Array<{ next_block: bigint }>
    >`SELECT next_block FROM chain_cursors WHERE network = 'local'`;
    expect(after!.next_block).toBe(cursor!.next_block);
  });
});

describe('a network registry that does not match the chain', () => {
  it('is refused: decimals() is read before the first scan and nothing is watched', async () => {
    const registry = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'config/networks.json'), 'utf8'));
    const local = registry.networks.find((network: { slug: string }) => network.slug === 'local');
    local.tokens.find((token: { ticker: string }) => token.ticker === 'USDT').decimals = 18; // the sandbox USDT has 6
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'kassa-registry-')), 'networks.json');
    writeFileSync(file, JSON.stringify(registry));
    const node = await startChainKassa(chain.url, { env: { KASSA_NETWORKS_FILE: file } });
    try {
      const wallet = randomWallet();
      const session = await sessionOn(node, wallet);
      await chain.pay(wallet, 'USDT', session.usdt);
      await node.watchers.tick();
      const [row] = await node.kassa.runtime.db.prisma.$queryRaw<Array<{ cursors: number; payments: number }>>`
        SELECT (SELECT count(*)::int FROM chain_cursors) AS cursors, (SELECT count(*)::int FROM payments) AS payments`;
      expect(row).toEqual({ cursors: 0, payments: 0 });
    } finally {
      await node.close();
    }
  });
});

describe('a transaction bound on the wrong chain', () => {
  it('rejects the bound transaction naming the chain it is really on; its transfer pays the session on that chain by its amount', async () => {
    // A second sandbox chain (31338) registered as another network beside `local`.
    const other = await startTestChain({ chainId: 31338 });
    const registry = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'config/networks.json'), 'utf8'));
    const local = registry.networks.find((network: { slug: string }) => network.slug === 'local');
    registry.networks.push({ ...local, slug: 'local-b', name: 'Second sandbox', chainId: 31338, rpcUrls: [other.url] });
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'kassa-registry-')), 'networks.json');
    writeFileSync(file, JSON.stringify(registry));
    const node = await startChainKassa(chain.url, {
      env: { KASSA_NETWORKS_FILE: file, KASSA_NETWORKS: 'local,local-b' },
    });
    try {
      const wallet = randomWallet();
      const session = await sessionOn(node, wallet);
      // Paid on local-b, but bound as if on local.
      const sent = await other.pay(wallet, 'USDT', session.usdt);
      const bound = await postBind(node.kassa, session.id, {
        tx_hash: sent.hash,
        chain_id: '31337',
        crypto_currency: 'USDT',
        payer_wallet_address: sent.from,
      });
      expect(bound.status).toBe(200);
      await node.watchers.tick();
      const [row] = await node.kassa.runtime.db.prisma.$queryRaw<
        Array<{ status: string; state: string; reason: string }>
      >`
        SELECT s.status::text, t.state, t.reason FROM checkout_sessions s JOIN checkout_session_transactions t ON t.session_id = s.id
         WHERE s.id = ${session.id}::uuid`;
      // The transfer itself is on local-b, one of the session's networks, for exactly its amount: that pays it.
      expect(row).toEqual({
        status: 'paid',
        state: 'rejected',
        reason: `wrong chain: transaction ${sent.hash} is on local-b (chain id 31338), not on local (chain id 31337) it was bound with`,
      });
    } finally {
      await node.close();
      await other.stop();
    }
  });
});
