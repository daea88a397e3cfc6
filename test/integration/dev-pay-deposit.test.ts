import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, http, parseAbi, parseUnits, type Hex, type PublicClient } from 'viem';
import { ensureDepositContracts } from '../../src/chain/sandbox.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { parseJsonOutput, runKassaInProcess } from '../support/cli-process.js';
import { createSession } from '../support/rest-kassa.js';

/**
 * `kassa dev pay` in deposit mode through the CLI on a real anvil and PostgreSQL (issue 34, done when): a payment from a
 * contract (native coin by an internal transfer, `--via-contract`) and two payers' transfers in one batch transaction
 * (`--batch`) each pay their session, found without a bind; `kassa collect` then moves the money to the wallet.
 */

const ERC20 = parseAbi(['function balanceOf(address owner) view returns (uint256)']);
const WALLET = '0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc';

let chain: TestChain;
let node: ChainKassa;
let shop: TestMerchant;
let client: PublicClient;
let env: Record<string, string>;

interface DevPayJson {
  session_id: string;
  tx_hash: string;
  to: string;
  crypto_currency: string;
  amount: string;
  bound: boolean;
  via_contract: boolean;
}

beforeAll(async () => {
  chain = await startTestChain();
  await ensureDepositContracts(chain.url, chain.network);
  client = createPublicClient({ transport: http(chain.url) }) as PublicClient;
  node = await startChainKassa(chain.url, { env: { KASSA_CONFIRMATIONS_LOCAL: '1' } });
  shop = await createMerchant(node.kassa.ctx, { wallet: WALLET, receiving: 'deposit' });
  env = {
    KASSA_ENV: 'test',
    LOG_LEVEL: 'silent',
    KASSA_NETWORKS: 'local',
    KASSA_RPC_URLS_LOCAL: chain.url,
    DATABASE_URL: node.kassa.database.databaseUrl!,
    KASSA_DATA_DIR: node.kassa.database.dataDir,
  };
}, 90_000);

afterAll(async () => {
  await node?.close();
  await chain?.stop();
});

const newSession = async () => (await createSession(node.kassa, shop, checkoutRequest())) as Record<string, any>;
const statusOf = async (id: string) => (await node.kassa.http.get(`/checkout-sessions/${id}`)).body.status as string;
const usdtOf = (address: string) =>
  client.readContract({
    address: chain.network.tokens.find((t) => t.ticker === 'USDT')!.address as Hex,
    abi: ERC20,
    functionName: 'balanceOf',
    args: [address as Hex],
  });

async function scan(): Promise<void> {
  await chain.mine(1);
  await node.watchers.tick();
  await node.watchers.tick();
}

describe('kassa dev pay through a contract and in a batch, in deposit mode', { timeout: 60_000 }, () => {
  const paid: Array<{ asset: string; units: bigint }> = [];

  it('--via-contract pays native coin by an internal transfer; the watcher finds it without a bind', async () => {
    const session = await newSession();
    const run = await runKassaInProcess(
      ['dev', 'pay', session.session_id, '--asset', 'ETH', '--via-contract', '--json'],
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    const payment = parseJsonOutput<DevPayJson>(run);
    expect(payment).toMatchObject({
      session_id: session.session_id,
      to: session.wallet_address,
      crypto_currency: 'ETH',
      bound: false,
      via_contract: true,
    });
    // Sent to the contract, not to the address: the coin reached the address inside the transaction.
    const tx = await client.getTransaction({ hash: payment.tx_hash as Hex });
    expect(tx.to).toBe('0xca11bde05977b3631167028862be2a173976ca11');
    await scan();
    expect(await statusOf(session.session_id)).toBe('paid');
    paid.push({ asset: 'ETH', units: parseUnits(payment.amount, 18) });
  });

  it('--batch pays two sessions in one transaction, each its own; several ids without --batch are refused', async () => {
    const [a, b] = [await newSession(), await newSession()];
    const refused = await runKassaInProcess(['dev', 'pay', a.session_id, b.session_id], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('give --batch');
    const twice = await runKassaInProcess(['dev', 'pay', a.session_id, a.session_id, '--batch'], env);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('each session can be paid once per batch');

    const run = await runKassaInProcess(
      ['dev', 'pay', a.session_id, b.session_id, '--batch', '--asset', 'USDT', '--account', '3', '--json'],
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    const payments = parseJsonOutput<DevPayJson[]>(run);
    expect(payments.map((p) => [p.session_id, p.to, p.via_contract])).toEqual([
      [a.session_id, a.wallet_address, true],
      [b.session_id, b.wallet_address, true],
    ]);
    expect(payments[1]!.tx_hash).toBe(payments[0]!.tx_hash);
    const receipt = await client.getTransactionReceipt({ hash: payments[0]!.tx_hash as Hex });
    expect(receipt.logs.filter((log) => log.address === chain.network.tokens[0]!.address.toLowerCase())).toHaveLength(
      2,
    );
    await scan();
    expect([await statusOf(a.session_id), await statusOf(b.session_id)]).toEqual(['paid', 'paid']);
    for (const p of payments) paid.push({ asset: 'USDT', units: parseUnits(p.amount, 6) });
  });

  it('kassa collect then moves the coin and the tokens to the wallet', async () => {
    const before = { eth: await client.getBalance({ address: WALLET }), usdt: await usdtOf(WALLET) };
    const run = await runKassaInProcess(['collect', '--org', shop.organisationId, '--network', 'local', '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    const sum = (asset: string) => paid.filter((p) => p.asset === asset).reduce((a, p) => a + p.units, 0n);
    expect(await usdtOf(WALLET)).toBe(before.usdt + sum('USDT'));
    expect(await client.getBalance({ address: WALLET })).toBe(before.eth + sum('ETH'));
  });
});
