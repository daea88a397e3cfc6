import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  getContractAddress,
  http,
  parseAbi,
  type Abi,
  type Hex,
  type PublicClient,
} from 'viem';
import { mnemonicToAccount, type HDAccount } from 'viem/accounts';
import { anvil } from 'viem/chains';
import { PACKAGE_ROOT } from '../config.js';
import type { Network } from '../domain/shared/networks.js';
import type { Logger } from '../logging.js';
import { rpcChainId, startAnvil, type AnvilProcess } from './anvil.js';
import { deployDepositFactory, ensureMulticall3, MULTICALL3_ADDRESS } from './deposit-contracts.js';

/** anvil's well-known development mnemonic: its accounts are funded with 10,000 ETH each. */
export const SANDBOX_MNEMONIC = 'test test test test test test test test test test test junk';
/** Account 0 deploys the tokens; account 1 is the demo organisation's wallet; accounts 2–9 pay. */
export const DEPLOYER_ACCOUNT = 0;
export const DEFAULT_PAYER_ACCOUNT = 2;
/** Every funded account gets this many whole tokens of each sandbox token. */
const TOKENS_PER_ACCOUNT = 1_000_000n;

const ERC20 = parseAbi([
  'function transfer(address to, uint256 amount) returns (bool)',
  'function approve(address spender, uint256 amount) returns (bool)',
  'function transferFrom(address from, address to, uint256 amount) returns (bool)',
  'function mint(address to, uint256 amount)',
  'function balanceOf(address owner) view returns (uint256)',
]);

export function sandboxAccount(index: number): HDAccount {
  return mnemonicToAccount(SANDBOX_MNEMONIC, { addressIndex: index });
}

interface Artefact {
  abi: Abi;
  bytecode: Hex;
}

function tokenArtefact(): Artefact {
  return JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'contracts/build/SandboxToken.json'), 'utf8')) as Artefact;
}

function clients(url: string, account: HDAccount, chainId: number = anvil.id) {
  const chain = { ...anvil, id: chainId, rpcUrls: { default: { http: [url] } } };
  return {
    publicClient: createPublicClient({ chain, transport: http(url) }) as PublicClient,
    walletClient: createWalletClient({ chain, account, transport: http(url) }),
  };
}

/**
 * Deploys the `local` network's tokens from account 0 in registry order, so each lands at the address the registry
 * names (nonce 0, 1, …), then funds the payers; skips what exists, so a chain another Kassa prepared is fine.
 */
export async function ensureSandboxTokens(url: string, network: Network, logger?: Logger): Promise<void> {
  const deployer = sandboxAccount(DEPLOYER_ACCOUNT);
  const { publicClient, walletClient } = clients(url, deployer, network.chainId);
  const artefact = tokenArtefact();
  let deployed = 0;
  for (const [index, token] of network.tokens.entries()) {
    const code = await publicClient.getCode({ address: token.address as Hex });
    if (code && code !== '0x') continue;
    const nonce = await publicClient.getTransactionCount({ address: deployer.address });
    const expected = getContractAddress({ from: deployer.address, nonce: BigInt(nonce) });
    if (nonce !== index || expected.toLowerCase() !== token.address.toLowerCase()) {
      throw new Error(
        `cannot deploy the sandbox ${token.ticker} token to ${token.address}: account 0 of the chain at ${url} is at ` +
          `nonce ${nonce}, ` +
          `which deploys to ${expected}. Restart the sandbox chain (stop what listens there) or update ` +
          `config/networks.json.`,
      );
    }
    const hash = await walletClient.deployContract({
      abi: artefact.abi,
      bytecode: artefact.bytecode,
      args: [`Sandbox ${token.ticker}`, token.ticker, token.decimals],
    });
    await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    deployed += 1;
  }
  if (deployed > 0) {
    for (const token of network.tokens) {
      for (let account = 1; account <= 9; account += 1) {
        const hash = await walletClient.writeContract({
          address: token.address as Hex,
          abi: ERC20,
          functionName: 'mint',
          args: [sandboxAccount(account).address, TOKENS_PER_ACCOUNT * 10n ** BigInt(token.decimals)],
        });
        await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
      }
    }
    logger?.info(
      { url, tokens: network.tokens.map((t) => `${t.ticker}@${t.address}`) },
      'deployed and funded the sandbox tokens',
    );
  }
}

/**
 * Deploys the deposit factory (deterministic deployer) and Multicall3 (its pre-signed transaction) from account 0,
 * after the tokens so their addresses stay where the registry names them; skips what exists.
 */
export async function ensureDepositContracts(url: string, network: Network, logger?: Logger): Promise<void> {
  const { publicClient, walletClient } = clients(url, sandboxAccount(DEPLOYER_ACCOUNT), network.chainId);
  const factory = await deployDepositFactory(publicClient, walletClient);
  const multicall = await ensureMulticall3(publicClient, walletClient);
  if (factory.txHash || multicall) {
    logger?.info({ url, factory: factory.address }, 'deployed the deposit factory and Multicall3');
  }
}

export interface SandboxChain {
  readonly url: string;
  /** True when this process started anvil (and stops it on shutdown). */
  readonly owned: boolean;
  stop(): Promise<void>;
}

/**
 * Development's offline chain: reuses one already answering at the `local` RPC URL, else starts anvil there; then makes
 * sure the tokens and deposit contracts exist.
 */
export async function startSandboxChain(network: Network, logger: Logger, stateFile?: string): Promise<SandboxChain> {
  const url = network.rpcUrls[0];
  if (!url) throw new Error(`network ${network.slug} has no RPC URL for the sandbox chain`);
  let anvilProcess: AnvilProcess | null = null;
  const running = await rpcChainId(url);
  if (running !== null && running !== network.chainId) {
    throw new Error(
      `${url} serves chain id ${running}, not the sandbox's ${network.chainId}; free the port or set ` +
        `KASSA_RPC_URLS_${network.slug.toUpperCase()}`,
    );
  }
  if (running === null) {
    const { hostname, port } = new URL(url);
    anvilProcess = await startAnvil({
      host: hostname.replace(/^\[|\]$/g, ''),
      port: Number(port || 8545),
      chainId: network.chainId,
      stateFile,
    });
    logger.info({ url, stateFile }, 'started the sandbox chain (anvil)');
  } else {
    logger.info({ url }, 'using the sandbox chain already running');
  }
  try {
    await ensureSandboxTokens(url, network, logger);
    await ensureDepositContracts(url, network, logger);
  } catch (error) {
    await anvilProcess?.stop();
    throw error;
  }
  return { url, owned: anvilProcess !== null, stop: async () => void (await anvilProcess?.stop()) };
}

/** Sends `baseUnits` of a token (or of the native coin when `tokenAddress` is null) from a sandbox account. */
export async function sandboxTransfer(
  url: string,
  fromAccount: number,
  to: string,
  tokenAddress: string | null,
  baseUnits: bigint,
  options: { gas?: bigint; chainId?: number } = {},
): Promise<{ hash: Hex; from: string; status: 'success' | 'reverted'; blockNumber: bigint }> {
  const account = sandboxAccount(fromAccount);
  const { publicClient, walletClient } = clients(url, account, options.chainId);
  const hash = tokenAddress
    ? await walletClient.writeContract({
        address: tokenAddress as Hex,
        abi: ERC20,
        functionName: 'transfer',
        args: [to as Hex, baseUnits],
        gas: options.gas,
      })
    : await walletClient.sendTransaction({ to: to as Hex, value: baseUnits, gas: options.gas });
  const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  return { hash, from: account.address.toLowerCase(), status: receipt.status, blockNumber: receipt.blockNumber };
}

const MULTICALL3 = parseAbi([
  'struct Call3Value { address target; bool allowFailure; uint256 value; bytes callData; }',
  'struct Result { bool success; bytes returnData; }',
  'function aggregate3Value(Call3Value[] calls) payable returns (Result[] returnData)',
]);

/** One transfer of a contract's batch: `baseUnits` of a token (or of the native coin when `tokenAddress` is null). */
export interface SandboxBatchTransfer {
  readonly to: string;
  readonly tokenAddress: string | null;
  readonly baseUnits: bigint;
}

/**
 * Sends the transfers in one transaction through the sandbox's Multicall3 (`aggregate3Value`), as an exchange's batch
 * or a contract wallet pays: native coin arrives by internal transfers, tokens by `transferFrom` (approved first).
 */
export async function sandboxContractTransfers(
  url: string,
  fromAccount: number,
  transfers: readonly SandboxBatchTransfer[],
  options: { chainId?: number } = {},
): Promise<{ hash: Hex; from: string; status: 'success' | 'reverted'; blockNumber: bigint }> {
  const account = sandboxAccount(fromAccount);
  const { publicClient, walletClient } = clients(url, account, options.chainId);
  const code = await publicClient.getCode({ address: MULTICALL3_ADDRESS });
  if (!code || code === '0x') throw new Error(`no Multicall3 at ${MULTICALL3_ADDRESS} on ${url}: restart the sandbox`);
  const perToken = new Map<string, bigint>();
  for (const t of transfers)
    if (t.tokenAddress) perToken.set(t.tokenAddress, (perToken.get(t.tokenAddress) ?? 0n) + t.baseUnits);
  for (const [token, total] of perToken) {
    const hash = await walletClient.writeContract({
      address: token as Hex,
      abi: ERC20,
      functionName: 'approve',
      args: [MULTICALL3_ADDRESS, total],
    });
    await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  }
  const calls = transfers.map((t) =>
    t.tokenAddress
      ? {
          target: t.tokenAddress as Hex,
          allowFailure: false,
          value: 0n,
          callData: encodeFunctionData({
            abi: ERC20,
            functionName: 'transferFrom',
            args: [account.address, t.to as Hex, t.baseUnits],
          }),
        }
      : { target: t.to as Hex, allowFailure: false, value: t.baseUnits, callData: '0x' as Hex },
  );
  const value = transfers.reduce((sum, t) => sum + (t.tokenAddress ? 0n : t.baseUnits), 0n);
  const hash = await walletClient.writeContract({
    address: MULTICALL3_ADDRESS,
    abi: MULTICALL3,
    functionName: 'aggregate3Value',
    args: [calls],
    value,
  });
  const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  return { hash, from: account.address.toLowerCase(), status: receipt.status, blockNumber: receipt.blockNumber };
}
