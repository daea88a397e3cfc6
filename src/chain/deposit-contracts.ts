import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  concat,
  createPublicClient,
  http,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  getContractAddress,
  keccak256,
  toBytes,
  type Abi,
  type Hex,
  type PublicClient,
  type WalletClient,
} from 'viem';
import { PACKAGE_ROOT } from '../config.js';

/**
 * The deposit contracts (docs/decisions/0028-deposit-addresses.md): DepositFactory, at one CREATE2 address on every
 * chain, and the DepositSweeper it creates at each deposit address; derived from contracts/build/.
 */

/** The standard deterministic CREATE2 deployer (Arachnid's), on the public EVM chains and in anvil. */
export const DETERMINISTIC_DEPLOYER = '0x4e59b44847b379578588920ca78fbf26c0b4956c' as const;
/** The salt the factory is deployed with through that deployer. */
export const FACTORY_SALT: Hex = `0x${'00'.repeat(32)}`;

interface Artefact {
  readonly abi: Abi;
  readonly bytecode: Hex;
}

interface PresignedDeployment {
  readonly address: Hex;
  readonly deployer: Hex;
  readonly rawTransaction: Hex;
}

const cache = new Map<string, unknown>();
function artefact<T>(name: string): T {
  if (!cache.has(name)) {
    const file = path.join(PACKAGE_ROOT, `contracts/build/${name}.json`);
    cache.set(name, JSON.parse(readFileSync(file, 'utf8')));
  }
  return cache.get(name) as T;
}

export const depositFactoryArtefact = (): Artefact => artefact<Artefact>('DepositFactory');
export const depositSweeperArtefact = (): Artefact => artefact<Artefact>('DepositSweeper');
/** Multicall3's canonical pre-signed deployment (the sandbox broadcasts it; public chains have it). */
export const multicall3Deployment = (): PresignedDeployment => artefact<PresignedDeployment>('Multicall3');
export const MULTICALL3_ADDRESS = '0xcA11bde05977b3631167028862bE2a173976CA11' as const;

/** The factory's address on every chain: it depends only on the deployer, the salt and the factory's bytecode. */
export function depositFactoryAddress(): Hex {
  return getContractAddress({
    opcode: 'CREATE2',
    from: DETERMINISTIC_DEPLOYER,
    salt: FACTORY_SALT,
    bytecode: depositFactoryArtefact().bytecode,
  });
}

/** keccak256 of the sweeper's (constant) init code; the factory holds the same value. */
export function sweeperInitCodeHash(): Hex {
  return keccak256(depositSweeperArtefact().bytecode);
}

/** The 32-byte id a session has in the factory: keccak256 of its id's UTF-8 bytes. */
export function depositId(sessionId: string): Hex {
  return keccak256(toBytes(sessionId));
}

/** The CREATE2 salt: the destination is part of it, so an address leads to that destination only. */
export function depositSalt(destination: string, sessionId: string): Hex {
  // Money at an address made for the zero address would be burnt when collected.
  if (BigInt(getAddress(destination)) === 0n) throw new Error('a deposit address needs a destination wallet, not 0x0');
  return keccak256(
    encodeAbiParameters([{ type: 'address' }, { type: 'bytes32' }], [getAddress(destination), depositId(sessionId)]),
  );
}

/**
 * The deposit address of a session whose money goes to `destination` (the organisation's wallet when the session
 * was created): the same on every chain where the factory is deployed. One keccak, no call to a node.
 */
export function depositAddress(destination: string, sessionId: string, factory: Hex = depositFactoryAddress()): Hex {
  return getContractAddress({
    opcode: 'CREATE2',
    from: factory,
    salt: depositSalt(destination, sessionId),
    bytecodeHash: sweeperInitCodeHash(),
  });
}

/** Calldata of `collect(destination, ids, tokens)`: forwards the sessions' deposits to `destination`. */
export function collectCalldata(destination: string, sessionIds: readonly string[], tokens: readonly string[]): Hex {
  return encodeFunctionData({
    abi: depositFactoryArtefact().abi,
    functionName: 'collect',
    args: [getAddress(destination), sessionIds.map(depositId), tokens.map((token) => getAddress(token))],
  });
}

async function hasCode(client: PublicClient, address: Hex): Promise<boolean> {
  const code = await client.getCode({ address });
  return code !== undefined && code !== '0x';
}

export interface FactoryDeployment {
  readonly address: Hex;
  /** Null when the factory was already there. */
  readonly txHash: Hex | null;
}

/**
 * Deploys the factory through the deterministic deployer from whatever account `wallet` holds; the address does not
 * depend on it. Does nothing when the factory is already deployed; refuses on a chain without that deployer.
 */
export async function deployDepositFactory(client: PublicClient, wallet: WalletClient): Promise<FactoryDeployment> {
  const address = depositFactoryAddress();
  if (await hasCode(client, address)) return { address, txHash: null };
  if (!(await hasCode(client, DETERMINISTIC_DEPLOYER))) {
    throw new Error(
      `chain ${await client.getChainId()} has no deterministic deployer at ${DETERMINISTIC_DEPLOYER}, so the deposit ` +
        `factory cannot get its address there (see docs/operations.md#deposit-contracts)`,
    );
  }
  if (!wallet.account) throw new Error('deploying the deposit factory needs a signing account');
  const txHash = await wallet.sendTransaction({
    account: wallet.account,
    chain: wallet.chain,
    to: DETERMINISTIC_DEPLOYER,
    data: concat([FACTORY_SALT, depositFactoryArtefact().bytecode]),
  });
  const receipt = await client.waitForTransactionReceipt({ hash: txHash, pollingInterval: 50 });
  // A deployment that lost a race to another one reverts, and the factory is there all the same.
  if (!(await hasCode(client, address))) {
    throw new Error(`deploying the deposit factory failed (transaction ${txHash}): no code at ${address}`);
  }
  return { address, txHash: receipt.status === 'success' ? txHash : null };
}

/**
 * Puts Multicall3 at its canonical address by its pre-signed transaction (nonce 0 of its deployer, funded first
 * from `wallet`). Used by the sandbox; public chains have it already. Does nothing when it is there.
 */
export async function ensureMulticall3(client: PublicClient, wallet: WalletClient): Promise<Hex | null> {
  const deployment = multicall3Deployment();
  if (await hasCode(client, deployment.address)) return null;
  if (!wallet.account) throw new Error('deploying Multicall3 needs a funding account');
  const fee = 10n ** 17n; // 1,000,000 gas at 100 gwei
  const balance = await client.getBalance({ address: deployment.deployer });
  if (balance < fee) {
    const funding = await wallet.sendTransaction({
      account: wallet.account,
      chain: wallet.chain,
      to: deployment.deployer,
      value: fee - balance,
    });
    await client.waitForTransactionReceipt({ hash: funding, pollingInterval: 50 });
  }
  let hash: Hex | null = null;
  try {
    hash = await client.sendRawTransaction({ serializedTransaction: deployment.rawTransaction });
    await client.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  } catch (error) {
    // Another process that prepares the same chain may have sent it first (nonce too low, already known).
    if (!(await hasCode(client, deployment.address))) throw error;
    return null;
  }
  if (!(await hasCode(client, deployment.address))) throw new Error(`Multicall3 did not deploy (transaction ${hash})`);
  return hash;
}

/**
 * Whether the factory has code on the chain one of `rpcUrls` serves; null when none of them answered in time (then
 * nobody can tell).
 */
export async function depositFactoryDeployed(rpcUrls: readonly string[], timeoutMs = 5_000): Promise<boolean | null> {
  for (const url of rpcUrls) {
    try {
      const client = createPublicClient({ transport: http(url, { timeout: timeoutMs, retryCount: 0 }) });
      return await hasCode(client as PublicClient, depositFactoryAddress());
    } catch {
      // The next URL, if any.
    }
  }
  return null;
}
