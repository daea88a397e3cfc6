import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, http, parseAbi, type Abi, type Address, type Hex } from 'viem';
import { anvil as anvilChain } from 'viem/chains';
import { ensureDepositContracts, sandboxAccount } from '../../src/chain/sandbox.js';
import { devPay } from '../../src/chain/dev-pay.js';
import { Decimal } from '../../src/domain/shared/money.js';
import { setPaymentPolicy } from '../../src/domain/organisations/organisations.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { runKassaInProcess } from '../support/cli-process.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { controllableClock, createSession, postBind } from '../support/rest-kassa.js';

/**
 * Deposit mode (docs/payment-rules.md#deposit-mode, issue 34): a transfer to a session's own deposit address pays that
 * session, whoever sent it, in any amount, with no bind and no unique amount; partial, paid and late are sums at the
 * address by block time. A bind changes nothing. Against a real anvil and PostgreSQL, with shared-wallet sessions
 * beside them judged as before.
 */

const CHAIN_ID = '31337';
const BATCH_SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
interface IERC20 { function transferFrom(address from, address to, uint256 value) external returns (bool); }
contract Batch {
  function disperse(address token, address[] calldata to, uint256[] calldata values) external {
    for (uint256 i = 0; i < to.length; i++) require(IERC20(token).transferFrom(msg.sender, to[i], values[i]));
  }
  function disperseNative(address payable[] calldata to, uint256[] calldata values) external payable {
    for (uint256 i = 0; i < to.length; i++) {
      (bool ok, ) = to[i].call{value: values[i]}("");
      require(ok);
    }
  }
}`;

let chain: TestChain;
let node: ChainKassa;
let depositShop: TestMerchant;
let sharedShop: TestMerchant;
let batch: (to: Address[], values: bigint[]) => Promise<Hex>;
let batchNative: (to: Address[], values: bigint[]) => Promise<Hex>;
const time = controllableClock();

const randomWallet = () => `0x${randomBytes(20).toString('hex')}`;

beforeAll(async () => {
  chain = await startTestChain();
  // As `npm start` prepares the sandbox: the deposit factory and Multicall3 (balance checks of deposit addresses).
  await ensureDepositContracts(chain.url, chain.network);
  node = await startChainKassa(chain.url, { clock: time.clock, env: { KASSA_CONFIRMATIONS_LOCAL: '1' } });
  depositShop = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
  await setPaymentPolicy(node.kassa.ctx, depositShop.organisationId, { receiving: 'deposit' });
  sharedShop = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
  ({ batch, batchNative } = await deployBatch());
}, 120_000);

afterAll(async () => {
  await node?.close();
  await chain?.stop();
});

/** A disperse contract (solc, offline) an "exchange" account approved USDT for: one transaction, several transfers. */
type Send = (to: Address[], values: bigint[]) => Promise<Hex>;

async function deployBatch(): Promise<{ batch: Send; batchNative: Send }> {
  const solc = createRequire(import.meta.url)('solc') as { compile(input: string): string };
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'Batch.sol': { content: BATCH_SOURCE } },
        settings: { outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
      }),
    ),
  ) as { contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>> };
  const { abi, evm } = output.contracts['Batch.sol']!.Batch!;
  const chainDef = { ...anvilChain, id: 31337, rpcUrls: { default: { http: [chain.url] } } };
  const wallet = createWalletClient({ chain: chainDef, account: sandboxAccount(3), transport: http(chain.url) });
  const reader = createPublicClient({ chain: chainDef, transport: http(chain.url) });
  const deployed = await wallet.deployContract({ abi, bytecode: `0x${evm.bytecode.object}` });
  const contract = (await reader.waitForTransactionReceipt({ hash: deployed })).contractAddress!;
  const usdt = chain.network.tokens.find((t) => t.ticker === 'USDT')!.address as Address;
  const approval = await wallet.writeContract({
    address: usdt,
    abi: parseAbi(['function approve(address,uint256) returns (bool)']),
    functionName: 'approve',
    args: [contract, 10n ** 15n],
  });
  await reader.waitForTransactionReceipt({ hash: approval });
  const send =
    (functionName: 'disperse' | 'disperseNative'): Send =>
    async (to, values) => {
      const hash =
        functionName === 'disperse'
          ? await wallet.writeContract({ address: contract, abi, functionName, args: [usdt, to, values] })
          : await wallet.writeContract({
              address: contract,
              abi,
              functionName,
              args: [to, values],
              value: values.reduce((a, b) => a + b, 0n),
            });
      const receipt = await reader.waitForTransactionReceipt({ hash });
      expect(receipt.status).toBe('success');
      return hash;
    };
  return { batch: send('disperse'), batchNative: send('disperseNative') };
}

interface Checkout {
  readonly id: string;
  readonly address: string;
  readonly quote: Record<string, string>;
}

async function checkout(merchant: TestMerchant = depositShop): Promise<Checkout> {
  const session = await createSession(node.kassa, merchant, checkoutRequest());
  const quote = Object.fromEntries(
    (session.crypto_options as Array<{ ticker: string; amount: string }>).map((o) => [o.ticker, o.amount]),
  );
  return { id: session.session_id as string, address: session.wallet_address as string, quote };
}

async function view(id: string): Promise<Record<string, any>> {
  const response = await node.kassa.http.get(`/checkout-sessions/${id}`);
  expect(response.status).toBe(200);
  return response.body;
}

/** Mines a block over what was sent and lets the watcher scan, confirm and settle. */
async function scan(target: ChainKassa = node): Promise<void> {
  await chain.mine(1);
  await target.watchers.tick();
  await target.watchers.tick();
}

const paymentsOf = (id: string) => node.kassa.ctx.store.chain.paymentsOfSession(id);
const live = async (id: string) => (await paymentsOf(id)).filter((p) => p.state !== 'reversed');

async function rowCount(sql: 'claims' | 'binds', id: string): Promise<number> {
  const prisma = node.kassa.runtime.db.prisma;
  const rows =
    sql === 'claims'
      ? await prisma.$queryRaw<Array<{ n: number }>>`
          SELECT count(*)::int AS n FROM payment_amount_claims WHERE session_id = ${id}::uuid`
      : await prisma.$queryRaw<Array<{ n: number }>>`
          SELECT count(*)::int AS n FROM checkout_session_transactions WHERE session_id = ${id}::uuid`;
  return rows[0]!.n;
}

describe('a transfer to a deposit address pays its session without a bind', () => {
  it('a token payment of the quote pays it, credited by its address, no unique amount claimed', async () => {
    const session = await checkout();
    expect(session.address).not.toBe(depositShop.wallet);
    await chain.pay(session.address, 'USDT', session.quote.USDT!, { from: 4 });
    await scan();
    const paid = await view(session.id);
    expect(paid.status).toBe('paid');
    expect(paid.crypto_currency).toBe('USDT');
    const payments = await paymentsOf(session.id);
    expect(payments.map((p) => [p.attribution, p.asset, p.state, p.late])).toEqual([
      ['deposit_address', 'USDT', 'confirmed', false],
    ]);
    expect(await rowCount('claims', session.id)).toBe(0);
  });

  it('a native-coin payment sent directly pays it', async () => {
    const session = await checkout();
    await chain.pay(session.address, 'ETH', session.quote.ETH!, { from: 5 });
    await scan();
    expect((await view(session.id)).status).toBe('paid');
    expect((await paymentsOf(session.id)).map((p) => [p.attribution, p.asset, p.logIndex])).toEqual([
      ['deposit_address', 'ETH', -1],
    ]);
  });

  it('a part makes it partial, a top-up of any amount from anyone pays it: sums at the address', async () => {
    const session = await checkout();
    const total = Number(session.quote.USDT!);
    await chain.pay(session.address, 'USDT', (total - 10).toFixed(6), { from: 4 });
    await scan();
    const partial = await view(session.id);
    expect(partial.status).toBe('partial');
    // The rest is what it owes, asked at its own address: no unique amount claimed for it either.
    expect(await rowCount('claims', session.id)).toBe(0);
    // Rounded up, and from another sender: still the session's, because of where it went.
    await chain.pay(session.address, 'USDT', '10.5', { from: 6 });
    await scan();
    const paid = await view(session.id);
    expect(paid.status).toBe('paid');
    expect(paid.overpaid).toBe(true);
    expect(await live(session.id)).toHaveLength(2);
  });

  it('two payers in one batch transaction to two sessions pay each its own session', async () => {
    const [a, b] = [await checkout(), await checkout()];
    const units = (amount: string) => BigInt(Math.round(Number(amount) * 1e6));
    const hash = await batch(
      [a.address as Address, b.address as Address],
      [units(a.quote.USDT!), units(b.quote.USDT!) / 2n],
    );
    await scan();
    expect((await view(a.id)).status).toBe('paid');
    expect((await view(b.id)).status).toBe('partial');
    for (const id of [a.id, b.id]) expect((await live(id)).map((p) => p.txHash)).toEqual([hash]);
  });

  it('a re-pricing claims no unique amount for a deposit-mode session (the store gives every asset its base amount)', async () => {
    const session = await checkout();
    const request = {
      ticker: 'USDT' as const,
      baseAmount: new Decimal(session.quote.USDT!),
      step: new Decimal('0.000001'),
      wallets: [{ network: 'local', walletAddress: session.address }],
    };
    const offsets = await node.kassa.ctx.store.transaction((tx) =>
      tx.claimUniqueAmounts(session.id, [request], 100, new Date()),
    );
    expect([...offsets]).toEqual([['USDT', 0]]);
    expect(await rowCount('claims', session.id)).toBe(0);
  });

  it('another asset than the selected one is recorded for the session and changes nothing it asks', async () => {
    const session = await checkout();
    await chain.pay(session.address, 'USDT', '5', { from: 4 });
    await scan();
    await chain.pay(session.address, 'USDC', '3', { from: 4 });
    await scan();
    const partial = await view(session.id);
    expect(partial.status).toBe('partial');
    expect(partial.crypto_currency).toBe('USDT');
    expect((await live(session.id)).map((p) => [p.asset, p.attribution])).toEqual([
      ['USDT', 'deposit_address'],
      ['USDC', 'deposit_address'],
    ]);
  });
});

describe('a bind on a deposit-mode session is accepted and changes nothing', () => {
  const bind = (id: string, hash: string) =>
    postBind(node.kassa, id, { tx_hash: hash, chain_id: CHAIN_ID, crypto_currency: 'USDT' });

  it('a stranger binding junk hashes, pending or unknown, stores nothing and holds nothing open', async () => {
    const session = await checkout();
    for (let i = 0; i < 3; i += 1)
      expect((await bind(session.id, `0x${randomBytes(32).toString('hex')}`)).status).toBe(200);
    const pending = await chain.payPending(randomWallet(), 'USDT', '1', { from: 7 });
    try {
      expect((await bind(session.id, pending.hash)).status).toBe(200);
    } finally {
      await pending.release();
    }
    await scan();
    expect(await rowCount('binds', session.id)).toBe(0);
    const untouched = await view(session.id);
    expect(untouched.status).toBe('waiting_payment');
    expect(untouched.crypto_currency).toBeNull();
    await chain.pay(session.address, 'USDT', session.quote.USDT!, { from: 4 });
    await scan();
    expect((await view(session.id)).status).toBe('paid');
  });

  it("a transfer to another session's address, or to a shared wallet, is refused and stays where it went", async () => {
    const [mine, theirs] = [await checkout(), await checkout()];
    const shared = await checkout(sharedShop);
    const toTheirs = await chain.pay(theirs.address, 'USDT', theirs.quote.USDT!, { from: 4 });
    const toShared = await chain.pay(shared.address, 'USDT', shared.quote.USDT!, { from: 4 });
    await scan();
    for (const hash of [toTheirs.hash, toShared.hash]) {
      const refused = await bind(mine.id, hash);
      expect(refused.status).toBe(409);
      expect(refused.body.code).toBe('wrong_recipient');
    }
    await scan();
    expect((await view(mine.id)).status).toBe('waiting_payment');
    expect(await live(mine.id)).toEqual([]);
    expect((await view(theirs.id)).status).toBe('paid');
    expect((await view(shared.id)).status).toBe('paid');
    expect((await live(shared.id)).map((p) => p.attribution)).toEqual(['exact_amount']);
  });

  it("the payer's bind of their own deposit is accepted, and the payment is credited once", async () => {
    const session = await checkout();
    const paid = await chain.pay(session.address, 'USDT', session.quote.USDT!, { from: 4 });
    expect((await bind(session.id, paid.hash)).status).toBe(200);
    await scan();
    expect((await bind(session.id, paid.hash)).status).toBe(200);
    expect((await view(session.id)).status).toBe('paid');
    expect(await live(session.id)).toHaveLength(1);
    expect(await rowCount('binds', session.id)).toBe(0);
  });
});

describe('what deposit mode adds to the chain-watching cases', () => {
  it("a deposit mined before the session was created is credited to it: the address is the session's alone", async () => {
    const session = await checkout();
    const sent = await chain.pay(session.address, 'USDT', session.quote.USDT!, { from: 4 });
    // As if the session had been created after the block (no one can know a fresh address before its session).
    await node.kassa.runtime.db.prisma.$executeRaw`
      UPDATE checkout_sessions SET created_at = created_at + interval '2 minutes' WHERE id = ${session.id}::uuid`;
    await scan();
    expect((await view(session.id)).status).toBe('paid');
    expect((await live(session.id)).map((p) => [p.txHash, p.attribution, p.late])).toEqual([
      [sent.hash, 'deposit_address', false],
    ]);
  });

  it('a reorganisation that removes a deposit rolls the session back; the deposit mined again pays it again, once', async () => {
    const session = await checkout();
    const raw = await chain.signPayment(session.address, 'USDT', session.quote.USDT!, { from: 8 });
    const snapshot = await chain.snapshot();
    const hash = await chain.sendRaw(raw);
    await scan();
    expect((await view(session.id)).status).toBe('paid');

    await chain.revert(snapshot);
    await chain.mine(5);
    await node.watchers.tick();
    await node.watchers.tick();
    expect((await view(session.id)).status).toBe('waiting_payment');
    expect(await live(session.id)).toEqual([]);

    expect(await chain.sendRaw(raw)).toBe(hash);
    await scan();
    expect((await view(session.id)).status).toBe('paid');
    const payments = await paymentsOf(session.id);
    expect(payments.map((p) => [p.txHash, p.state, p.attribution])).toEqual([[hash, 'confirmed', 'deposit_address']]);
  });

  it('shared-wallet sessions beside deposit ones are paid by their unique amounts as before', async () => {
    const [shared, deposit] = [await checkout(sharedShop), await checkout()];
    expect(shared.address).toBe(sharedShop.wallet.toLowerCase());
    expect(await rowCount('claims', shared.id)).toBeGreaterThan(0);
    // A non-exact transfer to the shared wallet pays nobody, as before; the same amount to the deposit address pays.
    const odd = (Number(shared.quote.USDT!) + 1.234567).toFixed(6);
    const unowned = await chain.pay(shared.address, 'USDT', odd, { from: 4 });
    await chain.pay(shared.address, 'USDT', shared.quote.USDT!, { from: 5 });
    await chain.pay(deposit.address, 'USDT', odd, { from: 6 });
    await scan();
    expect((await view(shared.id)).status).toBe('paid');
    expect((await live(shared.id)).map((p) => p.attribution)).toEqual(['exact_amount']);
    expect((await view(deposit.id)).status).toBe('paid');
    const left = await node.kassa.ctx.store.chain.unattributedPayments(10_000);
    expect(left.map((p) => p.txHash)).toContain(unowned.hash);
  });
});

describe('native coin a contract sends (an internal transfer), and kassa dev pay', () => {
  const wei = (amount: string) => BigInt(new Decimal(amount).times(new Decimal(10).pow(18)).toFixed(0));

  it('is found by a Multicall3 balance check of open deposit addresses and credited once', async () => {
    const [a, b] = [await checkout(), await checkout()];
    // Two payers' native coin in one contract call: no transaction is to either address, no log is emitted.
    await batchNative([a.address as Address, b.address as Address], [wei(a.quote.ETH!), wei(b.quote.ETH!) / 2n]);
    await scan();
    await scan();
    expect((await view(a.id)).status).toBe('paid');
    expect((await view(b.id)).status).toBe('partial');
    expect((await live(a.id)).map((p) => [p.asset, p.attribution, p.logIndex, p.baseUnits])).toEqual([
      ['ETH', 'deposit_address', -2, wei(a.quote.ETH!)],
    ]);
    // A direct top-up beside a second internal one in the same block: each counted once.
    await chain.pay(b.address, 'ETH', '0.001', { from: 5 });
    await batchNative([b.address as Address], [wei(b.quote.ETH!) / 2n]);
    await scan();
    await scan();
    expect((await view(b.id)).status).toBe('paid');
    const bPayments = await live(b.id);
    expect(bPayments.map((p) => p.logIndex).sort((x, y) => x - y)).toEqual([-2, -2, -1]);
    expect(bPayments.reduce((sum, p) => sum + p.baseUnits, 0n)).toBe(wei(b.quote.ETH!) + wei('0.001'));
  });

  it('one found by its balance is reversed with its block and found again when mined again', async () => {
    const session = await checkout();
    const snapshot = await chain.snapshot();
    await batchNative([session.address as Address], [wei(session.quote.ETH!)]);
    await scan();
    await scan();
    expect((await view(session.id)).status).toBe('paid');

    await chain.revert(snapshot);
    await chain.mine(5);
    await node.watchers.tick();
    await node.watchers.tick();
    expect((await view(session.id)).status).toBe('waiting_payment');
    expect(await live(session.id)).toEqual([]);

    await batchNative([session.address as Address], [wei(session.quote.ETH!)]);
    await scan();
    await scan();
    expect((await view(session.id)).status).toBe('paid');
    expect((await live(session.id)).map((p) => [p.logIndex, p.baseUnits])).toEqual([[-2, wei(session.quote.ETH!)]]);
  });

  it('after a collect, only what arrives afterwards is found: collected coin is neither counted again nor hiding more', async () => {
    const session = await checkout();
    await batchNative([session.address as Address], [wei(session.quote.ETH!) / 2n]);
    await scan();
    await scan();
    expect((await view(session.id)).status).toBe('partial');
    const run = await runKassaInProcess(['collect', '--org', depositShop.organisationId, '--network', 'local'], {
      KASSA_ENV: 'test',
      LOG_LEVEL: 'silent',
      KASSA_NETWORKS: 'local',
      KASSA_RPC_URLS_LOCAL: chain.url,
      DATABASE_URL: node.kassa.database.databaseUrl!,
      KASSA_DATA_DIR: node.kassa.database.dataDir,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(BigInt(await chain.rpc<string>('eth_getBalance', [session.address, 'latest']))).toBe(0n);
    await scan();
    expect(await live(session.id)).toHaveLength(1);
    await batchNative([session.address as Address], [wei(session.quote.ETH!) / 2n]);
    await scan();
    await scan();
    expect((await view(session.id)).status).toBe('paid');
    const payments = await live(session.id);
    expect(payments.map((p) => p.baseUnits)).toEqual([wei(session.quote.ETH!) / 2n, wei(session.quote.ETH!) / 2n]);
  });

  it('kassa dev pay pays a deposit-mode session at its address; its bind is accepted and writes nothing', async () => {
    const session = await checkout();
    const paid = await devPay(node.kassa.ctx, session.id);
    expect(paid.to).toBe(session.address);
    expect(paid.bound).toBe(true);
    await scan();
    expect((await view(session.id)).status).toBe('paid');
    expect((await live(session.id)).map((p) => [p.txHash, p.attribution])).toEqual([[paid.txHash, 'deposit_address']]);
    expect(await rowCount('binds', session.id)).toBe(0);
  });
});

describe('two instances scanning one database at once', () => {
  let database: TestDatabase;
  let a: ChainKassa;
  let b: ChainKassa;
  beforeAll(async () => {
    database = await createTestDatabase();
    a = await startChainKassa(chain.url, { database, settings: { leaseSeconds: 2 } });
    b = await startChainKassa(chain.url, { database, settings: { leaseSeconds: 2 } });
  }, 90_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  it('credit each deposit once', async () => {
    const shop = await createMerchant(a.kassa.ctx, { wallet: randomWallet() });
    await setPaymentPolicy(a.kassa.ctx, shop.organisationId, { receiving: 'deposit' });
    const ids: string[] = [];
    for (let round = 0; round < 3; round += 1) {
      for (const payer of [4, 5]) {
        const session = await createSession(round % 2 ? a.kassa : b.kassa, shop, checkoutRequest());
        ids.push(session.session_id as string);
        const usdt = (session.crypto_options as Array<{ ticker: string; amount: string }>).find(
          (o) => o.ticker === 'USDT',
        );
        await chain.pay(session.wallet_address as string, 'USDT', usdt!.amount, { from: payer });
      }
      await chain.mine(1);
      await Promise.all([a.watchers.tick(), b.watchers.tick(), a.watchers.tick(), b.watchers.tick()]);
      if (round === 1) await new Promise((resolve) => setTimeout(resolve, 2_100)); // the lease lapses once
    }
    await Promise.all([a.watchers.tick(), b.watchers.tick()]);
    await a.watchers.tick();
    const [counts] = await a.kassa.runtime.db.prisma.$queryRaw<
      Array<{ payments: number; paid: number; events: number }>
    >`
      SELECT (SELECT count(*)::int FROM payments WHERE session_id::text = ANY(${ids}) AND state <> 'reversed') AS payments,
             (SELECT count(*)::int FROM checkout_sessions WHERE id::text = ANY(${ids}) AND status = 'paid') AS paid,
             (SELECT count(*)::int FROM outbox_events WHERE session_id::text = ANY(${ids})
                AND type = 'checkout_session.paid') AS events`;
    expect(counts).toEqual({ payments: 6, paid: 6, events: 6 });
  });
});

describe('closed sessions (the chain clock moves ahead from here)', () => {
  it('a payment in the late window is recorded late and never pays the closed session', async () => {
    const session = await checkout();
    const expiresAt = new Date((await view(session.id)).expires_at as string);
    try {
      time.freeze(expiresAt.getTime() + 60_000);
      await chain.nextBlockAt(expiresAt.getTime() + 30_000);
      await node.watchers.tick();
      expect((await view(session.id)).status).toBe('expired');
      await chain.pay(session.address, 'USDT', session.quote.USDT!, { from: 4 });
      await scan();
      expect((await view(session.id)).status).toBe('expired');
      expect((await live(session.id)).map((p) => [p.attribution, p.late])).toEqual([['deposit_address', true]]);
    } finally {
      time.release();
    }
  });
});
