import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createWalletClient, encodeFunctionData, http, parseAbi, type Hex } from 'viem';
import { anvil as anvilChain } from 'viem/chains';
import { startAnvil, type AnvilProcess } from '../../src/chain/anvil.js';
import { startChainWatchers, type ChainWatchers, type WatcherSettings } from '../../src/chain/chain-watcher.js';
import { ensureSandboxTokens, sandboxAccount, sandboxTransfer } from '../../src/chain/sandbox.js';
import { PACKAGE_ROOT } from '../../src/config.js';
import type { AssetTicker } from '../../src/domain/shared/assets.js';
import { toBaseUnitsCeil, Decimal } from '../../src/domain/shared/money.js';
import type { Network } from '../../src/domain/shared/networks.js';
import { createLogger } from '../../src/logging.js';
import { freePort } from './cli-process.js';
import { startTestKassa, type TestKassa, type TestKassaOptions } from './kassa.js';
import type { TestDatabase } from './databases.js';

/** The registry's `local` network as shipped (config/networks.json), pointed at `url`. */
export function localNetwork(url: string): Network {
  const registry = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'config/networks.json'), 'utf8')) as {
    networks: Array<Omit<Network, 'rpcUrls'>>;
  };
  const local = registry.networks.find((network) => network.slug === 'local')!;
  return { ...local, rpcUrls: [url] };
}

/** A real anvil on a free port with the sandbox tokens deployed and funded, as `npm start` prepares it. */
export interface TestChain {
  readonly url: string;
  readonly network: Network;
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** Mines `blocks` empty blocks. */
  mine(blocks?: number): Promise<void>;
  snapshot(): Promise<string>;
  revert(id: string): Promise<void>;
  head(): Promise<bigint>;
  /**
   * Sets the next block's timestamp (`at` rounded down to whole seconds); the blocks after it follow from there, so a
   * time ahead of the wall clock moves the chain's clock ahead for the rest of the chain's life.
   */
  nextBlockAt(at: Date | number): Promise<void>;
  /** Sends `amount` of `asset` from sandbox account `from` to `to`; waits for the receipt. */
  pay(
    to: string,
    asset: AssetTicker,
    amount: string,
    options?: { from?: number; gas?: bigint },
  ): Promise<{ hash: Hex; from: string; status: string; blockNumber: bigint }>;
  /** Broadcasts a signed transaction and waits until it is mined (automine is asynchronous). */
  sendRaw(raw: Hex): Promise<Hex>;
  /**
   * Broadcasts a payment and leaves it pending (automine off) until `release` mines it:
   * a transaction the node knows but has not mined.
   */
  payPending(
    to: string,
    asset: AssetTicker,
    amount: string,
    options?: { from?: number; gas?: bigint },
  ): Promise<{ hash: Hex; release: () => Promise<void> }>;
  /** Signs a payment without sending it (to broadcast it again after a reorg). */
  signPayment(to: string, asset: AssetTicker, amount: string, options?: { from?: number; gas?: bigint }): Promise<Hex>;
  stop(): Promise<void>;
}

export async function startTestChain(options: { chainId?: number } = {}): Promise<TestChain> {
  const anvil: AnvilProcess = await startAnvil({ port: await freePort(), chainId: options.chainId });
  const network = { ...localNetwork(anvil.url), chainId: options.chainId ?? 31337 };
  try {
    await ensureSandboxTokens(anvil.url, network);
  } catch (error) {
    await anvil.stop(); // never leave a chain running behind a failed setup
    throw error;
  }
  let id = 0;
  const rpc = async <T>(method: string, params: unknown[] = []): Promise<T> => {
    id += 1;
    const response = await fetch(anvil.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    const body = (await response.json()) as { result?: T; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result as T;
  };
  const baseUnits = (asset: AssetTicker, amount: string) => {
    const token = network.tokens.find((t) => t.ticker === asset);
    return { token: token ?? null, units: toBaseUnitsCeil(new Decimal(amount), token?.decimals ?? 18) };
  };
  const testChain: TestChain = {
    url: anvil.url,
    network,
    rpc,
    mine: async (blocks = 1) => void (await rpc('anvil_mine', [`0x${blocks.toString(16)}`])),
    snapshot: () => rpc<string>('evm_snapshot'),
    revert: async (snapshotId) => {
      if (!(await rpc<boolean>('evm_revert', [snapshotId]))) throw new Error(`evm_revert ${snapshotId} failed`);
      // anvil's revert restores the clock of the snapshot: the blocks after it would lag the wall clock by the time
      // since, and a bind (judged to the second, docs/payment-rules.md, rule 1) would find them mined before sessions
      // created meanwhile. The next block is at the wall clock again (or just after the head, when that is later).
      const head = await rpc<{ timestamp: string }>('eth_getBlockByNumber', ['latest', false]);
      const seconds = Math.max(Math.floor(Date.now() / 1000), Number(BigInt(head.timestamp)) + 1);
      await rpc('evm_setNextBlockTimestamp', [seconds]);
    },
    head: async () => BigInt(await rpc<string>('eth_blockNumber')),
    nextBlockAt: async (at) => {
      const seconds = Math.floor((typeof at === 'number' ? at : at.getTime()) / 1000);
      await rpc('evm_setNextBlockTimestamp', [seconds]);
    },
    pay: (to, asset, amount, options = {}) => {
      const { token, units } = baseUnits(asset, amount);
      return sandboxTransfer(anvil.url, options.from ?? 2, to, token?.address ?? null, units, {
        gas: options.gas,
        chainId: network.chainId,
      });
    },
    async sendRaw(raw) {
      const hash = await rpc<Hex>('eth_sendRawTransaction', [raw]);
      for (let attempt = 0; attempt < 200; attempt += 1) {
        if (await rpc<unknown>('eth_getTransactionReceipt', [hash])) return hash;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(`transaction ${hash} was not mined`);
    },
    async payPending(to, asset, amount, options = {}) {
      const raw = await sign(to, asset, amount, options);
      await rpc('evm_setAutomine', [false]);
      const hash = await rpc<Hex>('eth_sendRawTransaction', [raw]);
      return {
        hash,
        release: async () => {
          await rpc('evm_setAutomine', [true]);
          await rpc('anvil_mine', ['0x1']);
        },
      };
    },
    signPayment: (to, asset, amount, options = {}) => sign(to, asset, amount, options),
    stop: () => anvil.stop(),
  };
  return testChain;

  async function sign(
    to: string,
    asset: AssetTicker,
    amount: string,
    options: { from?: number; gas?: bigint } = {},
  ): Promise<Hex> {
    const { token, units } = baseUnits(asset, amount);
    const account = sandboxAccount(options.from ?? 2);
    const wallet = createWalletClient({
      chain: { ...anvilChain, id: network.chainId, rpcUrls: { default: { http: [anvil.url] } } },
      account,
      transport: http(anvil.url),
    });
    const request = token
      ? await wallet.prepareTransactionRequest({
          to: token.address as Hex,
          data: encodeTransfer(to, units),
          gas: options.gas ?? 100_000n,
        })
      : await wallet.prepareTransactionRequest({ to: to as Hex, value: units, gas: options.gas ?? 21_000n });
    return wallet.signTransaction(request as Parameters<typeof wallet.signTransaction>[0]);
  }
}

const ERC20 = parseAbi(['function transfer(address to, uint256 amount) returns (bool)']);

function encodeTransfer(to: string, units: bigint): Hex {
  return encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [to as Hex, units] });
}

export const WATCH_SETTINGS: WatcherSettings = {
  // Ticks are driven by the tests (watchers.tick()); the timer only fires once at start.
  intervalMs: 3_600_000,
  maxBlocksPerRange: 1000,
  backfillBlocks: 1_000_000,
  leaseSeconds: 30,
  rpcTimeoutMs: 5_000,
  droppedAfterMinutes: 60,
};

export interface ChainKassa {
  readonly kassa: TestKassa;
  readonly watchers: ChainWatchers;
  close(): Promise<void>;
}

/** A real Kassa on the `local` network of `chainUrl`, with its chain watchers running. */
export async function startChainKassa(
  chainUrl: string,
  options: TestKassaOptions & { settings?: Partial<WatcherSettings>; database?: TestDatabase } = {},
): Promise<ChainKassa> {
  const kassa = await startTestKassa({
    ...options,
    env: { KASSA_NETWORKS: 'local', KASSA_RPC_URLS_LOCAL: chainUrl, ...options.env },
  });
  const watchers = startChainWatchers(kassa.ctx, { ...WATCH_SETTINGS, ...options.settings }, createLogger('silent'));
  return {
    kassa,
    watchers,
    async close() {
      await watchers.stop();
      await kassa.close();
    },
  };
}

/** A JSON-RPC proxy in front of a chain that can refuse or cut chosen calls, as real providers do. */
export interface RpcProxy {
  readonly url: string;
  /** Decides per call: undefined forwards it; an object answers with that JSON-RPC error; 'cut' destroys the connection. */
  intercept: (call: { method: string; params: unknown[] }) => { code: number; message: string } | 'cut' | undefined;
  /** Runs after the chain answered a forwarded request and before that answer is sent on (to change the chain meanwhile). */
  afterAnswer?: (calls: ReadonlyArray<{ method: string; params: unknown[] }>) => Promise<void>;
  readonly calls: Array<{ method: string; params: unknown[] }>;
  close(): Promise<void>;
}

export async function startRpcProxy(targetUrl: string): Promise<RpcProxy> {
  const proxy: RpcProxy = {
    url: '',
    intercept: () => undefined,
    calls: [],
    close: async () => undefined,
  };
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', async () => {
      const body = JSON.parse(text) as
        { id: number; method: string; params: unknown[] } | Array<{ id: number; method: string; params: unknown[] }>;
      const calls = Array.isArray(body) ? body : [body];
      for (const call of calls) {
        proxy.calls.push({ method: call.method, params: call.params });
        const verdict = proxy.intercept(call);
        if (verdict === 'cut') {
          req.socket.destroy();
          return;
        }
        if (verdict) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, error: verdict }));
          return;
        }
      }
      const upstream = await fetch(targetUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: text,
      });
      const answer = await upstream.text();
      await proxy.afterAnswer?.(calls);
      res.writeHead(upstream.status, { 'content-type': 'application/json' });
      res.end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  Object.assign(proxy, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return proxy;
}
