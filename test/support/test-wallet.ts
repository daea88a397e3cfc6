import type { Page } from 'playwright-core';
import type { TestChain } from './chain.js';

/**
 * An EIP-1193 wallet injected into a page for the browser tests (docs/hosted-pages.md#hosted-checkout-page):
 * announced through EIP-6963 and as window.ethereum, each request forwarded to the
 * test's anvil, whose default accounts are unlocked, so `eth_sendTransaction` really sends.
 * `refuse` makes the wallet decline with EIP-1193's 4001, as a payer pressing "Reject" does.
 * `beforeSend` holds eth_sendTransaction open, as a wallet waiting for the payer's confirmation does.
 *
 * Like a real wallet it is on one chain at a time: the anvil's, unless `chainId` says another.
 * wallet_switchEthereumChain moves it to a chain it knows (`knownChains`, and always the one it
 * is on) and answers EIP-3326's 4902 for any other; wallet_addEthereumChain (EIP-3085) adds the
 * chain and moves to it, as wallets do once the payer approves. Requests for the chain are
 * forwarded to the anvil only while the wallet is on the anvil's chain.
 */
export interface TestWalletOptions {
  readonly account: string;
  readonly refuse?: readonly string[];
  readonly name?: string;
  /** Awaited before eth_sendTransaction goes to the chain: the wallet's confirmation dialog, held open by the test. */
  readonly beforeSend?: () => Promise<void>;
  /** The chain the wallet is on when the page opens; default the anvil's. */
  readonly chainId?: number;
  /** Chains it can switch to without adding them; default only the anvil's. */
  readonly knownChains?: readonly number[];
  /** Every request, in order, with its params. */
  readonly log?: Array<{ method: string; params: unknown[] }>;
}

export async function injectTestWallet(page: Page, chain: TestChain, options: TestWalletOptions): Promise<string[]> {
  const calls: string[] = [];
  const anvilChain = BigInt(await chain.rpc<string>('eth_chainId'));
  let current = options.chainId === undefined ? anvilChain : BigInt(options.chainId);
  const known = new Set<bigint>([current, ...(options.knownChains ?? [Number(anvilChain)]).map(BigInt)]);
  const unrecognised = (chainId: string) => ({ error: { code: 4902, message: `Unrecognized chain ID "${chainId}".` } });
  await page.exposeFunction('__kassaTestWallet', async (method: string, params: unknown[]) => {
    calls.push(method);
    options.log?.push({ method, params });
    if (options.refuse?.includes(method)) return { error: { code: 4001, message: 'User rejected the request.' } };
    if (method === 'eth_sendTransaction') await options.beforeSend?.();
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return { result: [options.account] };
      case 'eth_chainId':
        return { result: `0x${current.toString(16)}` };
      case 'wallet_switchEthereumChain': {
        const wanted = (params[0] as { chainId: string }).chainId;
        if (!known.has(BigInt(wanted))) return unrecognised(wanted);
        current = BigInt(wanted);
        return { result: null };
      }
      case 'wallet_addEthereumChain': {
        const added = params[0] as { chainId: string; rpcUrls?: string[] };
        known.add(BigInt(added.chainId));
        current = BigInt(added.chainId);
        return { result: null };
      }
      default:
        if (current !== anvilChain)
          return { error: { code: -32603, message: `The wallet is on chain ${current}, not on the test chain.` } };
        try {
          return { result: await chain.rpc(method, params ?? []) };
        } catch (error) {
          return { error: { code: -32603, message: (error as Error).message } };
        }
    }
  });
  // A string, run in the page before its own scripts (the test project has no DOM types).
  await page.addInitScript(`(() => {
    const provider = {
      isTestWallet: true,
      async request({ method, params }) {
        const answer = await window.__kassaTestWallet(method, params || []);
        if (answer.error) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
        return answer.result;
      },
      on() {},
      removeListener() {},
    };
    window.ethereum = provider;
    const info = { uuid: '6f1d8e56-1a7a-4a5b-9b0e-5d2c3c4b5a61', name: ${JSON.stringify(options.name ?? 'Test Wallet')}, icon: 'data:image/svg+xml,<svg xmlns="http://www.w3.org/2000/svg"/>', rdns: 'test.kassa.wallet' };
    const announce = () => window.dispatchEvent(new CustomEvent('eip6963:announceProvider', { detail: Object.freeze({ info, provider }) }));
    window.addEventListener('eip6963:requestProvider', announce);
    announce();
  })();`);
  return calls;
}
