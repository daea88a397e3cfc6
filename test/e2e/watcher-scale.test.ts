import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDepositContracts } from '../../src/chain/sandbox.js';
import { setPaymentPolicy } from '../../src/domain/organisations/organisations.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant } from '../factories/merchant.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { startChainKassa, startRpcProxy, startTestChain, type ChainKassa, type RpcProxy } from '../support/chain.js';
import { type TestChain } from '../support/chain.js';
import { createSession } from '../support/rest-kassa.js';

/**
 * The watcher with many open deposit addresses (docs/payment-detection.md#many-open-addresses, decision 0036): per
 * range it asks for Transfer logs by the addresses as topic lists or reads every registry-token Transfer log and
 * matches here, whichever costs fewer calls; both ways record the same deposits. Real anvil and PostgreSQL.
 */

const OPEN = 1_200; // three topic lists of 500: reading every token log (one call) is cheaper
const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

let chain: TestChain;

beforeAll(async () => {
  chain = await startTestChain();
  await ensureDepositContracts(chain.url, chain.network);
}, 120_000);

afterAll(async () => {
  await chain?.stop();
});

/** A deposit-mode merchant with `count` open sessions (one made by the API, the rest copied by SQL) at `addresses`. */
async function openDepositSessions(node: ChainKassa, addresses: readonly string[]): Promise<string[]> {
  const merchant = await createMerchant(node.kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}` });
  await setPaymentPolicy(node.kassa.ctx, merchant.organisationId, { receiving: 'deposit' });
  const template = (await createSession(node.kassa, merchant, checkoutRequest())).session_id as string;
  const prisma = node.kassa.runtime.db.prisma;
  const ids = [template];
  await prisma.$transaction(async (tx) => {
    const copies = await tx.$queryRaw<Array<{ id: string }>>`
      SELECT gen_random_uuid()::text AS id FROM generate_series(2, ${addresses.length}::int)`;
    ids.push(...copies.map((row) => row.id));
    for (const table of [
      'checkout_sessions',
      'checkout_session_items',
      'checkout_session_quotes',
      'checkout_session_networks',
    ]) {
      const columns = (
        await tx.$queryRawUnsafe<Array<{ column_name: string }>>(
          `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1
            ORDER BY ordinal_position`,
          table,
        )
      ).map((row) => row.column_name);
      const key = table === 'checkout_sessions' ? 'id' : 'session_id';
      const values = columns.map((column) => (column === key ? 'c.id::uuid' : `t.${column}`));
      await tx.$executeRawUnsafe(
        `INSERT INTO ${table} (${columns.join(', ')}) SELECT ${values.join(', ')}
           FROM unnest($1::text[]) AS c(id), ${table} t WHERE t.${key}::text = $2`,
        ids.slice(1),
        template,
      );
    }
    await tx.$executeRawUnsafe(
      `UPDATE checkout_session_networks n SET wallet_address = v.address
         FROM unnest($1::text[], $2::text[]) AS v(id, address) WHERE n.session_id::text = v.id`,
      ids,
      addresses,
    );
  });
  return ids;
}

/** What a database recorded for the addresses: "hash:logIndex:to:units", sorted. */
async function recorded(node: ChainKassa): Promise<string[]> {
  const rows = await node.kassa.runtime.db.prisma.$queryRaw<Array<{ key: string }>>`
    SELECT tx_hash || ':' || log_index || ':' || to_address || ':' || base_units::text AS key FROM payments
     WHERE token_address IS NOT NULL ORDER BY 1`;
  return rows.map((row) => row.key);
}

const logCalls = (proxy: RpcProxy) =>
  proxy.calls
    .filter((call) => call.method === 'eth_getLogs')
    .map((call) => (call.params[0] as { topics: unknown[] }).topics);

describe(`${OPEN} open deposit addresses`, () => {
  const addresses = Array.from({ length: OPEN }, () => `0x${randomBytes(20).toString('hex')}`);
  let plainProxy: RpcProxy;
  let strictProxy: RpcProxy;
  let plain: ChainKassa;
  let strict: ChainKassa;
  let databases: TestDatabase[] = [];

  beforeAll(async () => {
    plainProxy = await startRpcProxy(chain.url);
    strictProxy = await startRpcProxy(chain.url);
    databases = [await createTestDatabase(), await createTestDatabase()];
    // Each on a database of its own, the same addresses open in both, both starting at the head.
    plain = await startChainKassa(plainProxy.url, { database: databases[0], settings: { backfillBlocks: 0 } });
    strict = await startChainKassa(strictProxy.url, { database: databases[1], settings: { backfillBlocks: 0 } });
    await openDepositSessions(plain, addresses);
    await openDepositSessions(strict, addresses);
    await plain.watchers.tick();
    await strict.watchers.tick();
  }, 120_000);

  afterAll(async () => {
    await plain?.close();
    await strict?.close();
    for (const database of databases) await database.drop();
    await plainProxy?.close();
    await strictProxy?.close();
  });

  it('reads every token Transfer log in one call and matches the addresses here', async () => {
    plainProxy.calls.length = 0;
    for (const [i, to] of [addresses[0]!, addresses[700]!, addresses[OPEN - 1]!, addresses[700]!].entries())
      await chain.pay(to, i % 2 ? 'USDC' : 'USDT', '1.5', { from: 2 + (i % 3) });
    await chain.pay(`0x${randomBytes(20).toString('hex')}`, 'USDT', '2', { from: 5 }); // to nobody watched
    await plain.watchers.tick();
    expect(logCalls(plainProxy)).toEqual([[TRANSFER_TOPIC]]);
    const found = await recorded(plain);
    expect(found).toHaveLength(4);
    expect(found.map((key) => key.split(':')[2]).sort()).toEqual(
      [addresses[0]!, addresses[700]!, addresses[700]!, addresses[OPEN - 1]!].sort(),
    );
  });

  it('a provider that refuses long ranges and long topic lists: the addresses asked for, the same deposits found', async () => {
    // Every token log over more than one block is "too many results"; an OR-list over 200 topics is refused, as geth
    // refuses one over 1,000.
    strictProxy.intercept = ({ method, params }) => {
      if (method !== 'eth_getLogs') return undefined;
      const filter = params[0] as { fromBlock: string; toBlock: string; topics: unknown[] };
      const wallets = filter.topics[2] as string[] | undefined;
      if (wallets && wallets.length > 200) return { code: -32000, message: 'exceed max topics' };
      if (!wallets && BigInt(filter.toBlock) > BigInt(filter.fromBlock))
        return { code: -32005, message: 'query returned more than 10000 results' };
      return undefined;
    };
    // The first range (the first test's blocks) learns that every-log reads cost a call per block or more.
    strictProxy.calls.length = 0;
    await strict.watchers.tick();
    expect(await recorded(strict)).toEqual(await recorded(plain));
    expect(logCalls(strictProxy).every((topics) => topics.length === 1)).toBe(true);

    // So a range of several blocks is asked for by the addresses, in lists of at most 200.
    for (const [i, to] of [addresses[5]!, addresses[999]!, addresses[1_100]!].entries())
      await chain.pay(to, 'USDT', '3', { from: 2 + i });
    strictProxy.calls.length = 0;
    await strict.watchers.tick();
    await plain.watchers.tick();
    const accepted = logCalls(strictProxy).filter(
      (topics) => topics.length === 3 && (topics[2] as string[]).length <= 200,
    );
    expect(accepted.length).toBeGreaterThanOrEqual(Math.ceil(OPEN / 200));
    expect(await recorded(strict)).toHaveLength(7);
    expect(await recorded(strict)).toEqual(await recorded(plain));
  });
});

describe('two instances on one database with many open deposit addresses', () => {
  let database: TestDatabase;
  let a: ChainKassa;
  let b: ChainKassa;
  const addresses = Array.from({ length: OPEN }, () => `0x${randomBytes(20).toString('hex')}`);

  beforeAll(async () => {
    database = await createTestDatabase();
    // A short lease, so leadership changes hands while they run.
    a = await startChainKassa(chain.url, { database, settings: { leaseSeconds: 1, backfillBlocks: 0 } });
    b = await startChainKassa(chain.url, { database, settings: { leaseSeconds: 1, backfillBlocks: 0 } });
    await openDepositSessions(a, addresses);
    await Promise.all([a.watchers.tick(), b.watchers.tick()]);
  }, 120_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  it('record each deposit exactly once while both tick at the same time', async () => {
    const paid: string[] = [];
    for (let round = 0; round < 4; round += 1) {
      for (let i = 0; i < 3; i += 1) {
        const to = addresses[round * 300 + i * 7]!;
        await chain.pay(to, 'USDT', '1', { from: 2 + i });
        paid.push(to);
      }
      await Promise.all([a.watchers.tick(), b.watchers.tick(), a.watchers.tick(), b.watchers.tick()]);
      if (round === 1) await new Promise((resolve) => setTimeout(resolve, 1_100)); // the lease lapses once
    }
    await Promise.all([a.watchers.tick(), b.watchers.tick()]);
    const found = await recorded(a);
    expect(found).toHaveLength(12);
    expect(new Set(found).size).toBe(12);
    expect(found.map((key) => key.split(':')[2]).sort()).toEqual(paid.sort());
  });
});
