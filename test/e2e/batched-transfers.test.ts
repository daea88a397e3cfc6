import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, http, parseAbi, type Abi, type Address, type Hex } from 'viem';
import { anvil as anvilChain } from 'viem/chains';
import { sandboxAccount } from '../../src/chain/sandbox.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { createSession, postBind } from '../support/rest-kassa.js';

/**
 * One transaction with several Transfer logs to one merchant's wallet (an exchange's batched
 * withdrawal, a disperse contract): each log is a payment of its own (docs/payment-rules.md,
 * rule 3). A bind takes the one log that fits its session best and leaves the others to their
 * own sessions: found by review, a payer's bind took every log of the batch, and the other
 * payers' binds were refused. Against a real anvil, with a disperse contract compiled here by
 * solc (a devDependency, offline).
 */

const CHAIN_ID = '31337';
const DISPERSE_SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
interface IERC20 { function transferFrom(address from, address to, uint256 value) external returns (bool); }
contract Disperse {
  function disperse(address token, address[] calldata to, uint256[] calldata values) external {
    for (uint256 i = 0; i < to.length; i++) require(IERC20(token).transferFrom(msg.sender, to[i], values[i]));
  }
}`;

let chain: TestChain;
let node: ChainKassa;
let disperse: (to: Address, values: bigint[]) => Promise<Hex>;

beforeAll(async () => {
  chain = await startTestChain();
  node = await startChainKassa(chain.url, { env: { KASSA_CONFIRMATIONS_LOCAL: '1' } });
  const solc = createRequire(import.meta.url)('solc') as { compile(input: string): string };
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'Disperse.sol': { content: DISPERSE_SOURCE } },
        settings: { outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
      }),
    ),
  ) as { contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>> };
  const { abi, evm } = output.contracts['Disperse.sol']!.Disperse!;
  const chainDef = { ...anvilChain, id: 31337, rpcUrls: { default: { http: [chain.url] } } };
  // The "exchange": a sandbox account that is no payer of these tests.
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
  disperse = async (to, values) => {
    const hash = await wallet.writeContract({
      address: contract,
      abi,
      functionName: 'disperse',
      args: [usdt, values.map(() => to), values],
    });
    const receipt = await reader.waitForTransactionReceipt({ hash });
    expect(receipt.logs).toHaveLength(values.length);
    return hash;
  };
}, 120_000);

afterAll(async () => {
  await node?.close();
  await chain?.stop();
});

const randomWallet = () => `0x${randomBytes(20).toString('hex')}`;
const priced = (usd: number) => checkoutRequest({ items: [{ name: 'Order', quantity: 1, unit_price: usd }] });
const amountsOf = async (sessionId: string) =>
  (await node.kassa.ctx.store.chain.paymentsOfSession(sessionId)).map((p) => p.amount.toFixed());
const bind = (merchant: TestMerchant, sessionId: string, hash: Hex) =>
  postBind(node.kassa, sessionId, { tx_hash: hash, chain_id: CHAIN_ID, crypto_currency: 'USDT' });

describe('a transaction with several transfers to one wallet', () => {
  it("each payer's bind takes the one transfer that fits their session; nobody takes a stranger's", async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const b = (await createSession(node.kassa, merchant, priced(60))).session_id as string;
    const c = (await createSession(node.kassa, merchant, priced(40))).session_id as string;
    // A third session, open before the batch is mined (a bind takes only a transfer mined while its session existed).
    const d = (await createSession(node.kassa, merchant, priced(40))).session_id as string;
    const hash = await disperse(merchant.wallet as Address, [60_000_000n, 40_000_000n]);

    const first = await bind(merchant, b, hash);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(await amountsOf(b)).toEqual(['60']);
    const second = await bind(merchant, c, hash);
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(await amountsOf(c)).toEqual(['40']);

    await chain.mine(2);
    await node.watchers.tick();
    expect(await amountsOf(b)).toEqual(['60']);
    expect(await amountsOf(c)).toEqual(['40']);
    // Both transfers are now credited: a third session's bind of the batch gets nothing.
    const third = await bind(merchant, d, hash);
    expect(third.status).toBe(409);
    expect(third.body.message).toMatch(/already paid another checkout session/);
    expect(await amountsOf(d)).toEqual([]);
  });

  it("a batch holding one session's exact amount pays that session, and another payer can still bind their part", async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const a = await createSession(node.kassa, merchant, priced(25));
    const b = (await createSession(node.kassa, merchant, priced(50))).session_id as string;
    const exact = (a.crypto_options as Array<{ ticker: string; amount: string }>).find((o) => o.ticker === 'USDT')!;
    const exactUnits = BigInt(exact.amount.replace('.', '')) / 100n; // 8 decimals on the wire, 6 on the token
    const hash = await disperse(merchant.wallet as Address, [exactUnits, 50_000_000n]);
    await chain.mine(2);
    await node.watchers.tick();
    await node.watchers.tick();
    expect((await node.kassa.http.get(`/checkout-sessions/${a.session_id as string}`)).body.status).toBe('paid');

    const bound = await bind(merchant, b, hash);
    expect(bound.status, JSON.stringify(bound.body)).toBe(200);
    expect(await amountsOf(b)).toEqual(['50']);
    expect(await amountsOf(a.session_id as string)).toEqual([exact.amount.replace(/0+$/, '')]);
  });
});
