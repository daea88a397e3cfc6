import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, http, parseAbi, toHex, type Hex, type PublicClient } from 'viem';
import { ensureDepositContracts, sandboxAccount } from '../../src/chain/sandbox.js';
import { createWebhookEndpoint } from '../../src/domain/webhooks/webhook-endpoints.js';
import { setPaymentPolicy, setWallet } from '../../src/domain/organisations/organisations.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { startTestChain, type TestChain } from '../support/chain.js';
import { parseJsonOutput, runKassaInProcess } from '../support/cli-process.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createSession } from '../support/rest-kassa.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { FAST_WEBHOOKS, signedRequest, startDeliveryLoop } from '../support/webhooks.js';

/**
 * `kassa collect` (docs/operations.md#collecting-deposits) on a real anvil and PostgreSQL: it finds the deposit-mode
 * sessions holding money by reading the chain, moves it only to the wallet each address was made for, records what
 * moved per session and asset, and emits `funds.collected` (webhook and events feed) with the record.
 */

const ERC20 = parseAbi(['function balanceOf(address owner) view returns (uint256)']);
const WALLET = '0x976ea74026e726554db657fa54763abd0c3a0aa9';
const NEW_WALLET = '0x14dc79964da2c08b23698b3d3cc7ca32193d9955';

let chain: TestChain;
let kassa: TestKassa;
let client: PublicClient;
let merchant: TestMerchant;
let receiver: WebhookReceiver;
let env: Record<string, string>;
let usdt: Hex;

beforeAll(async () => {
  chain = await startTestChain();
  await ensureDepositContracts(chain.url, chain.network);
  client = createPublicClient({ transport: http(chain.url) }) as PublicClient;
  usdt = chain.network.tokens.find((token) => token.ticker === 'USDT')!.address as Hex;
  kassa = await startTestKassa({
    env: { KASSA_NETWORKS: 'local', KASSA_RPC_URLS_LOCAL: chain.url, ...FAST_WEBHOOKS },
  });
  merchant = await createMerchant(kassa.ctx, { wallet: WALLET });
  await setPaymentPolicy(kassa.ctx, merchant.organisationId, { receiving: 'deposit' });
  receiver = await startWebhookReceiver();
  await createWebhookEndpoint(kassa.ctx, merchant.organisationId, { url: receiver.url, events: ['funds.collected'] });
  env = {
    KASSA_ENV: 'test',
    LOG_LEVEL: 'silent',
    KASSA_NETWORKS: 'local',
    KASSA_RPC_URLS_LOCAL: chain.url,
    DATABASE_URL: kassa.database.databaseUrl!,
    KASSA_DATA_DIR: kassa.database.dataDir,
  };
}, 60_000);

afterAll(async () => {
  await receiver?.close();
  await kassa?.close();
  await chain?.stop();
});

const tokenBalance = (owner: string) =>
  client.readContract({ address: usdt, abi: ERC20, functionName: 'balanceOf', args: [owner as Hex] });
const nativeBalance = (owner: string) => client.getBalance({ address: owner as Hex });

interface CollectJson {
  mode: string;
  deposit_addresses: number;
  holdings: Array<{ session_id: string; deposit_address: string; destination: string; balances: unknown[] }>;
  transactions: Array<{
    destination: string;
    session_ids: string[];
    tokens: string[];
    to: string;
    data: string;
    gas: string;
    tx_hash?: string;
    status?: string;
    collection?: { collected: Array<{ session_id: string; crypto_currency: string; base_units: string }> };
  }>;
}

async function collect(args: string[] = [], extraEnv: Record<string, string> = {}): Promise<CollectJson> {
  const run = await runKassaInProcess(
    ['collect', '--org', merchant.organisationId, '--network', 'local', '--json', ...args],
    { ...env, ...extraEnv },
  );
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return parseJsonOutput<CollectJson>(run);
}

async function recordedItems() {
  return kassa.runtime.db.prisma.$queryRaw<
    Array<{ session_id: string; asset: string; base_units: string; destination: string; tx_hash: string }>
  >`SELECT i.session_id::text, i.asset, i.base_units::text, c.destination, c.tx_hash
      FROM deposit_collection_items i JOIN deposit_collections c ON c.id = i.collection_id
     ORDER BY c.block_number, i.session_id, i.asset`;
}

describe('kassa collect', { timeout: 60_000 }, () => {
  let paid: Array<{ id: string; address: string }>;

  it('--dry-run reports the sessions holding money and the transaction, and moves nothing', async () => {
    const sessions = await Promise.all([0, 1, 2].map(() => createSession(kassa, merchant, checkoutRequest())));
    paid = sessions.map((session) => ({ id: session.session_id, address: session.wallet_address }));
    await chain.pay(paid[0]!.address, 'USDT', '12.5');
    await chain.pay(paid[1]!.address, 'ETH', '0.5', { gas: 21_000n });
    await chain.pay(paid[2]!.address, 'USDT', '3');
    await chain.pay(paid[2]!.address, 'ETH', '0.25', { gas: 21_000n });
    const unpaid = await createSession(kassa, merchant, checkoutRequest());

    const before = { usdt: await tokenBalance(WALLET), native: await nativeBalance(WALLET) };
    const plan = await collect(['--dry-run']);
    expect(plan.mode).toBe('dry_run');
    expect(plan.deposit_addresses).toBe(4);
    expect(plan.holdings.map((holding) => holding.session_id).sort()).toEqual(paid.map((p) => p.id).sort());
    expect(plan.holdings.map((holding) => holding.session_id)).not.toContain(unpaid.session_id);
    expect(plan.transactions).toHaveLength(1);
    expect(plan.transactions[0]).toMatchObject({ destination: WALLET, tokens: [usdt.toLowerCase()] });
    expect(Number(plan.transactions[0]!.gas)).toBeGreaterThan(50_000);
    expect(plan.transactions[0]!.tx_hash).toBeUndefined();
    expect(await tokenBalance(WALLET)).toBe(before.usdt);
    expect(await nativeBalance(WALLET)).toBe(before.native);
    expect(await recordedItems()).toEqual([]);

    // The text form says the same for a person.
    const text = await runKassaInProcess(
      ['collect', '--org', merchant.organisationId, '--network', 'local', '--dry-run'],
      env,
    );
    expect(text.stdout).toContain('3 of 4 deposit addresses hold money');
    expect(text.stdout).toContain(`12.5 USDT`);
    expect(text.stdout).toMatch(/transaction 1 of 1: 3 sessions to 0x976e\w+, gas \d+/);
  });

  it('moves the tokens and the native coin of several sessions to the wallet only, records them, and emits funds.collected', async () => {
    const before = { usdt: await tokenBalance(WALLET), native: await nativeBalance(WALLET) };
    const signer = sandboxAccount(0).address;
    const signerBefore = await tokenBalance(signer);
    const deliveries = startDeliveryLoop(kassa.ctx);
    try {
      const result = await collect();
      expect(result.mode).toBe('sent');
      expect(result.transactions).toHaveLength(1);
      expect(result.transactions[0]!.status).toBe('success');
      expect(await tokenBalance(WALLET)).toBe(before.usdt + 15_500_000n);
      expect(await nativeBalance(WALLET)).toBe(before.native + 75n * 10n ** 16n);
      expect(await tokenBalance(signer)).toBe(signerBefore); // the signer pays gas and gets nothing
      for (const session of paid) {
        expect(await tokenBalance(session.address)).toBe(0n);
        expect(await nativeBalance(session.address)).toBe(0n);
      }
      const txHash = result.transactions[0]!.tx_hash!.toLowerCase();
      const expected = [
        { session_id: paid[0]!.id, asset: 'USDT', base_units: '12500000' },
        { session_id: paid[1]!.id, asset: 'ETH', base_units: '500000000000000000' },
        { session_id: paid[2]!.id, asset: 'ETH', base_units: '250000000000000000' },
        { session_id: paid[2]!.id, asset: 'USDT', base_units: '3000000' },
      ].map((item) => ({ ...item, destination: WALLET, tx_hash: txHash }));
      const byKey = (a: { session_id: string; asset: string }, b: { session_id: string; asset: string }) =>
        `${a.session_id}${a.asset}`.localeCompare(`${b.session_id}${b.asset}`);
      expect((await recordedItems()).sort(byKey)).toEqual(expected.sort(byKey));

      // Delivered as a webhook, and in the events feed, once.
      const [hook] = await receiver.waitFor((received) => received.length >= 1);
      expect(hook!.body.type).toBe('funds.collected');
      expect(hook!.body.data).toMatchObject({
        organisation_id: merchant.organisationId,
        network: 'local',
        chain_id: '31337',
        destination: WALLET,
        tx_hash: txHash,
      });
      expect(hook!.body.data.collected).toHaveLength(4);
      expect(hook!.body.data.collected).toContainEqual({
        session_id: paid[0]!.id,
        deposit_address: paid[0]!.address,
        crypto_currency: 'USDT',
        token_address: usdt.toLowerCase(),
        amount: '12.50000000',
        base_units: '12500000',
      });
      const feed = await signedRequest(kassa, merchant, 'get', '/events?limit=100');
      expect(feed.status, JSON.stringify(feed.body)).toBe(200);
      const collected = feed.body.data.filter((event: { type: string }) => event.type === 'funds.collected');
      expect(collected).toHaveLength(1);
      expect(collected[0]).toEqual(hook!.body);
    } finally {
      await deliveries.stop();
    }
  });

  it('run again, finds nothing and sends nothing; money that arrives later is collected by the next run', async () => {
    const again = await collect();
    expect(again.holdings).toEqual([]);
    expect(again.transactions).toEqual([]);
    expect((await recordedItems()).length).toBe(4);

    await chain.pay(paid[0]!.address, 'USDT', '1');
    const before = await tokenBalance(WALLET);
    const later = await collect();
    expect(later.transactions).toHaveLength(1);
    expect(later.transactions[0]!.session_ids).toEqual([paid[0]!.id]);
    expect(await tokenBalance(WALLET)).toBe(before + 1_000_000n);
    expect((await recordedItems()).length).toBe(5);
  });

  it('after a wallet change, older addresses are collected to the old wallet and newer ones to the new, one transaction each', async () => {
    const old = await createSession(kassa, merchant, checkoutRequest());
    await setWallet(kassa.ctx, merchant.organisationId, NEW_WALLET);
    try {
      const fresh = await createSession(kassa, merchant, checkoutRequest());
      await chain.pay(old.wallet_address, 'USDT', '5');
      await chain.pay(fresh.wallet_address, 'USDT', '6');
      const before = { old: await tokenBalance(WALLET), fresh: await tokenBalance(NEW_WALLET) };
      const result = await collect();
      expect(result.transactions.map((tx) => [tx.destination, tx.session_ids])).toEqual([
        [WALLET, [old.session_id]],
        [NEW_WALLET, [fresh.session_id]],
      ]);
      expect(await tokenBalance(WALLET)).toBe(before.old + 5_000_000n);
      expect(await tokenBalance(NEW_WALLET)).toBe(before.fresh + 6_000_000n);
    } finally {
      await setWallet(kassa.ctx, merchant.organisationId, WALLET);
    }
  });

  it('packs many sessions into as few transactions as --max-gas allows', async () => {
    const sessions = await Promise.all(
      Array.from({ length: 6 }, () => createSession(kassa, merchant, checkoutRequest())),
    );
    for (const session of sessions) await chain.pay(session.wallet_address, 'USDT', '1');
    const wide = await collect(['--dry-run']);
    expect(wide.transactions).toHaveLength(1);
    const perTransaction = BigInt(wide.transactions[0]!.gas);
    const narrow = await collect(['--dry-run', '--max-gas', String(perTransaction / 2n)]);
    expect(narrow.transactions.length).toBeGreaterThan(1);
    expect(narrow.transactions.length).toBeLessThanOrEqual(4);
    for (const tx of narrow.transactions) expect(BigInt(tx.gas)).toBeLessThanOrEqual(perTransaction / 2n);
    expect(narrow.transactions.flatMap((tx) => tx.session_ids).sort()).toEqual(
      sessions.map((session) => session.session_id).sort(),
    );
  });

  it('--unsigned prints transactions any wallet can send; --record records one sent elsewhere, once', async () => {
    const unsigned = await collect(['--unsigned']);
    expect(unsigned.mode).toBe('unsigned');
    expect(unsigned.transactions).toHaveLength(1);
    const tx = unsigned.transactions[0]!;
    expect(tx.tx_hash).toBeUndefined();
    const before = await tokenBalance(WALLET);
    // A stranger's wallet sends it: the money still goes to the organisation's wallet.
    const stranger = sandboxAccount(7);
    const raw = await stranger.signTransaction({
      to: tx.to as Hex,
      data: tx.data as Hex,
      gas: (BigInt(tx.gas) * 6n) / 5n,
      nonce: await client.getTransactionCount({ address: stranger.address }),
      chainId: 31337,
      maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 10n ** 9n,
      type: 'eip1559',
    });
    const hash = await chain.sendRaw(raw);
    expect(await tokenBalance(WALLET)).toBe(before + 6_000_000n);
    const recorded = await runKassaInProcess(
      ['collect', '--org', merchant.organisationId, '--network', 'local', '--record', hash, '--json'],
      env,
    );
    expect(recorded.stderr).toBe('');
    expect(parseJsonOutput<{ recorded: boolean; collected: unknown[] }>(recorded)).toMatchObject({ recorded: true });
    expect(parseJsonOutput<{ collected: unknown[] }>(recorded).collected).toHaveLength(6);
    const twice = await runKassaInProcess(
      ['collect', '--org', merchant.organisationId, '--network', 'local', '--record', hash, '--json'],
      env,
    );
    expect(parseJsonOutput<{ recorded: boolean }>(twice).recorded).toBe(false);
    const [{ events }] = await kassa.runtime.db.prisma.$queryRaw<Array<{ events: number }>>`
      SELECT count(*)::int AS events FROM outbox_events WHERE type = 'funds.collected'`;
    // The first collect, the later one, the two after the wallet change, and this one.
    expect(events).toBe(5);
  });

  it('two collects of one address mined in one block: its native coin is counted once, by the first', async () => {
    const session = await createSession(kassa, merchant, checkoutRequest());
    await chain.pay(session.wallet_address, 'ETH', '0.3', { gas: 21_000n });
    const tx = (await collect(['--unsigned'])).transactions[0]!;
    const sign = async (account: number) => {
      const signer = sandboxAccount(account);
      return signer.signTransaction({
        to: tx.to as Hex,
        data: tx.data as Hex,
        gas: (BigInt(tx.gas) * 6n) / 5n,
        nonce: await client.getTransactionCount({ address: signer.address }),
        chainId: 31337,
        maxFeePerGas: 10n ** 10n,
        maxPriorityFeePerGas: 10n ** 9n,
        type: 'eip1559',
      });
    };
    const raws = [await sign(8), await sign(9)];
    await chain.rpc('evm_setAutomine', [false]);
    let hashes: Hex[];
    try {
      hashes = [];
      for (const raw of raws) hashes.push(await chain.rpc<Hex>('eth_sendRawTransaction', [raw]));
      await chain.rpc('anvil_mine', ['0x1']);
    } finally {
      await chain.rpc('evm_setAutomine', [true]);
    }
    const receipts = await Promise.all(hashes.map((hash) => client.waitForTransactionReceipt({ hash })));
    expect(receipts[0]!.blockNumber).toBe(receipts[1]!.blockNumber);
    const [first, second] = [...receipts].sort((a, b) => a.transactionIndex - b.transactionIndex);
    const record = (hash: string) =>
      runKassaInProcess(
        ['collect', '--org', merchant.organisationId, '--network', 'local', '--record', hash, '--json'],
        env,
      );
    const recorded = await record(first!.transactionHash);
    expect(parseJsonOutput<{ collected: Array<{ base_units: string }> }>(recorded).collected).toEqual([
      expect.objectContaining({
        session_id: session.session_id,
        crypto_currency: 'ETH',
        base_units: '300000000000000000',
      }),
    ]);
    const nothing = await record(second!.transactionHash);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('collected nothing of this organisation');
  });

  it('signs with a key from KASSA_SIGNER_KEY for that run; refuses a bad key and an unknown organisation', async () => {
    const session = await createSession(kassa, merchant, checkoutRequest());
    await chain.pay(session.wallet_address, 'ETH', '0.1', { gas: 21_000n });
    const key = toHex(sandboxAccount(5).getHdKey().privateKey!);
    const result = await collect([], { KASSA_SIGNER_KEY: key });
    expect(result.transactions).toHaveLength(1);
    const sent = await client.getTransaction({ hash: result.transactions[0]!.tx_hash as Hex });
    expect(sent.from.toLowerCase()).toBe(sandboxAccount(5).address.toLowerCase());

    const bad = await runKassaInProcess(['collect', '--org', merchant.organisationId, '--network', 'local'], {
      ...env,
      KASSA_SIGNER_KEY: 'not-a-key',
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('KASSA_SIGNER_KEY');
    const unknown = await runKassaInProcess(
      ['collect', '--org', '0b0e2a61-3a57-4f3c-9d4e-9b2f6c1d2e3f', '--network', 'local'],
      env,
    );
    expect(unknown.code).toBe(4);
  });
});

describe('kassa orgs and the receiving mode', () => {
  it('create --receiving, show, list, policy --receiving; wallets set says where older addresses lead', async () => {
    const created = await runKassaInProcess(
      [
        'orgs',
        'create',
        '--name',
        'Deposits',
        '--wallet',
        '0xa0ee7a142d267c1f36714e4a8f75612f20a79720',
        '--receiving',
        'deposit',
        '--json',
      ],
      env,
    );
    expect(created.stderr).toBe('');
    const org = parseJsonOutput<{ id: string; receiving_mode: string }>(created);
    expect(org.receiving_mode).toBe('deposit_addresses');
    const shown = await runKassaInProcess(['orgs', 'show', org.id], env);
    expect(shown.stdout).toContain('receiving by deposit addresses');
    expect(shown.stdout).toContain('receiving deposit_addresses');
    const listed = parseJsonOutput<Array<{ id: string; receiving_mode: string }>>(
      await runKassaInProcess(['orgs', 'list', '--json'], env),
    );
    expect(listed.find((one) => one.id === org.id)?.receiving_mode).toBe('deposit_addresses');
    expect(listed.find((one) => one.id === merchant.organisationId)?.receiving_mode).toBe('deposit_addresses');

    const moved = await runKassaInProcess(
      ['wallets', 'set', '--org', org.id, '--address', '0x23618e81e3f5cdf7f54c3d65f7fbc0abf5b21e8f'],
      env,
    );
    expect(moved.stdout).toContain('older sessions keep addresses that lead only to the wallet they were made for');

    const shared = parseJsonOutput<{ receiving_mode: string }>(
      await runKassaInProcess(['orgs', 'policy', '--org', org.id, '--receiving', 'shared', '--json'], env),
    );
    expect(shared.receiving_mode).toBe('shared_wallet');
    // Not asked: deposit addresses, as the factory is deployed on local (more in receiving-default.test.ts).
    const plain = await runKassaInProcess(['orgs', 'create', '--name', 'Plain', '--json'], env);
    expect(parseJsonOutput<{ receiving_mode: string }>(plain).receiving_mode).toBe('deposit_addresses');

    const again = await runKassaInProcess(['orgs', 'policy', '--org', org.id, '--receiving', 'deposit'], env);
    expect(again.stdout).toContain('the deposit factory must be deployed on each of its networks');
    const bad = await runKassaInProcess(['orgs', 'policy', '--org', org.id, '--receiving', 'hot'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('receiving mode must be deposit or shared');
    expect((await runKassaInProcess(['orgs', 'show', '0b0e2a61-3a57-4f3c-9d4e-9b2f6c1d2e3f'], env)).code).toBe(4);
  });
});
