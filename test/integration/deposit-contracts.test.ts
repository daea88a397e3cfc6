import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPublicClient,
  createWalletClient,
  getAddress,
  http,
  parseAbi,
  type Abi,
  type Hex,
  toHex,
  type PublicClient,
} from 'viem';
import { anvil as anvilChain } from 'viem/chains';
import {
  DETERMINISTIC_DEPLOYER,
  MULTICALL3_ADDRESS,
  collectCalldata,
  deployDepositFactory,
  depositAddress,
  depositFactoryAddress,
  depositFactoryArtefact,
  depositId,
  sweeperInitCodeHash,
} from '../../src/chain/deposit-contracts.js';
import { startAnvil } from '../../src/chain/anvil.js';
import { ensureDepositContracts, sandboxAccount } from '../../src/chain/sandbox.js';
import { startTestChain, type TestChain } from '../support/chain.js';
import {
  KASSA_BIN,
  assertCliBuilt,
  cleanEnv,
  freePort,
  parseJsonOutput,
  runKassaInProcess,
} from '../support/cli-process.js';

/**
 * The deposit contracts (docs/decisions/0028-deposit-addresses.md) on a real anvil: money at a session's deposit
 * address moves only to the wallet in its salt, whoever collects; the address takes a 21,000-gas transfer, stays
 * usable after a collect, and the factory has one address whatever account deploys it.
 */

const ERC20 = parseAbi(['function balanceOf(address owner) view returns (uint256)']);
const ORG_WALLET = sandboxAccount(1).address;
const NEW_WALLET = '0x000000000000000000000000000000000000bEEF';
const STRANGER = 7;

let chain: TestChain;
let client: PublicClient;
let usdt: Hex;
let usdc: Hex;
let tokens: Hex[];

function walletOf(account: number) {
  return createWalletClient({
    chain: { ...anvilChain, rpcUrls: { default: { http: [chain.url] } } },
    account: sandboxAccount(account),
    transport: http(chain.url),
  });
}

/** Sends a collect from sandbox account `from` (anyone may) and returns its receipt. */
async function collect(from: number, destination: string, sessionIds: string[], tokenList: string[] = tokens) {
  const hash = await walletOf(from).sendTransaction({
    to: depositFactoryAddress(),
    data: collectCalldata(destination, sessionIds, tokenList),
  });
  return client.waitForTransactionReceipt({ hash, pollingInterval: 25 });
}

const tokenBalance = (token: Hex, owner: string) =>
  client.readContract({ address: token, abi: ERC20, functionName: 'balanceOf', args: [owner as Hex] });
const nativeBalance = (owner: string) => client.getBalance({ address: owner as Hex });
const code = async (address: string) => (await client.getCode({ address: address as Hex })) ?? '0x';

beforeAll(async () => {
  chain = await startTestChain();
  client = createPublicClient({ transport: http(chain.url) }) as PublicClient;
  usdt = chain.network.tokens.find((t) => t.ticker === 'USDT')!.address as Hex;
  usdc = chain.network.tokens.find((t) => t.ticker === 'USDC')!.address as Hex;
  tokens = chain.network.tokens.map((t) => t.address as Hex);
});

afterAll(async () => {
  await chain?.stop();
});

describe('the deposit factory', () => {
  it('has the same address whichever account deploys it, the one `kassa contracts address` predicts', async () => {
    expect(await code(DETERMINISTIC_DEPLOYER)).not.toBe('0x'); // anvil carries the deterministic deployer
    const predicted = parseJsonOutput<{ factory: string; sweeper_init_code_hash: string }>(
      await runKassaInProcess(['contracts', 'address', '--json'], {}),
    );
    expect(predicted.factory).toBe(depositFactoryAddress());
    const before = await chain.snapshot();
    const first = parseJsonOutput<{ factory: string; deployed: boolean; signer: string }>(
      await runKassaInProcess(['contracts', 'deploy', '--network', 'local', '--json'], {
        KASSA_RPC_URLS_LOCAL: chain.url,
        KASSA_SIGNER_KEY: toHex(sandboxAccount(3).getHdKey().privateKey!),
      }),
    );
    expect(first).toMatchObject({ factory: predicted.factory, deployed: true });
    expect(first.signer.toLowerCase()).toBe(sandboxAccount(3).address.toLowerCase());
    await chain.revert(before);
    expect(await code(predicted.factory)).toBe('0x');
    // Another account (the sandbox default, account 0), another chain state: the same address.
    const second = parseJsonOutput<{ factory: string; deployed: boolean; signer: string }>(
      await runKassaInProcess(['contracts', 'deploy', '--network', 'local', '--json'], {
        KASSA_RPC_URLS_LOCAL: chain.url,
      }),
    );
    expect(second).toMatchObject({ factory: predicted.factory, deployed: true });
    expect(second.signer.toLowerCase()).toBe(sandboxAccount(0).address.toLowerCase());
    const again = parseJsonOutput<{ deployed: boolean }>(
      await runKassaInProcess(['contracts', 'deploy', '--network', 'local', '--json'], {
        KASSA_RPC_URLS_LOCAL: chain.url,
      }),
    );
    expect(again.deployed).toBe(false);
    // The chain computes deposit addresses as Kassa does.
    const abi = depositFactoryArtefact().abi;
    expect(
      await client.readContract({ address: predicted.factory as Hex, abi, functionName: 'sweeperInitCodeHash' }),
    ).toBe(sweeperInitCodeHash());
    expect(
      await client.readContract({
        address: predicted.factory as Hex,
        abi,
        functionName: 'depositAddress',
        args: [ORG_WALLET, depositId('cs_on_chain')],
      }),
    ).toBe(depositAddress(ORG_WALLET, 'cs_on_chain'));
    // The sandbox also puts Multicall3 at its canonical address (the same call is safe to repeat).
    await ensureDepositContracts(chain.url, chain.network);
    await ensureDepositContracts(chain.url, chain.network);
    expect(await code(MULTICALL3_ADDRESS)).not.toBe('0x');
  }, 60_000);

  it('refuses a key that is not one, an unknown network, and a wallet without a session or of zeros', async () => {
    const noKey = await runKassaInProcess(['contracts', 'deploy', '--network', 'local'], {
      KASSA_RPC_URLS_LOCAL: chain.url,
      KASSA_SIGNER_KEY: 'not-a-key',
    });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('KASSA_SIGNER_KEY');
    const unknown = await runKassaInProcess(['contracts', 'deploy', '--network', 'nowhere'], {});
    expect(unknown.code).toBe(2);
    const pair = await runKassaInProcess(['contracts', 'address', '--wallet', ORG_WALLET], {});
    expect(pair.code).toBe(2);
    const zero = `0x${'0'.repeat(40)}`;
    expect((await runKassaInProcess(['contracts', 'address', '--wallet', zero, '--session', 'cs_1'], {})).code).toBe(2);
  });

  it('has that address on a chain with another id too, deployed by yet another account', async () => {
    const other = await startAnvil({ port: await freePort(), chainId: 8453 });
    try {
      const otherChain = { ...anvilChain, id: 8453, rpcUrls: { default: { http: [other.url] } } };
      const deployment = await deployDepositFactory(
        createPublicClient({ chain: otherChain, transport: http(other.url) }) as PublicClient,
        createWalletClient({ chain: otherChain, account: sandboxAccount(5), transport: http(other.url) }),
      );
      expect(deployment.txHash).not.toBeNull();
      expect(deployment.address).toBe(depositFactoryAddress());
    } finally {
      await other.stop();
    }
  });

  it('takes the signing key on stdin for one run (`--key-stdin`)', async () => {
    assertCliBuilt();
    const fresh = await startAnvil({ port: await freePort() }); // a chain without the factory
    try {
      const child = spawn(process.execPath, [KASSA_BIN, 'contracts', 'deploy', '--network', 'local', '--key-stdin'], {
        env: cleanEnv({ KASSA_RPC_URLS_LOCAL: fresh.url, LOG_LEVEL: 'silent' }),
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.stdin.end(`${toHex(sandboxAccount(6).getHdKey().privateKey!)}\n`);
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(stdout).toContain(`deployed the deposit factory at ${depositFactoryAddress()} on local`);
      expect(stdout).toContain(`signed by ${sandboxAccount(6).address} from stdin`);
    } finally {
      await fresh.stop();
    }
  }, 60_000);

  it('prints a session deposit address for a wallet', async () => {
    const run = await runKassaInProcess(['contracts', 'address', '--wallet', ORG_WALLET, '--session', 'cs_1'], {});
    expect(run.stdout.trim()).toBe(depositAddress(ORG_WALLET, 'cs_1'));
  });
});

describe('a deposit address', () => {
  beforeAll(() => ensureDepositContracts(chain.url, chain.network));

  it('takes a plain 21,000-gas native transfer, and a collect by a stranger pays the organisation wallet', async () => {
    const address = depositAddress(ORG_WALLET, 'cs_stranger');
    const native = await chain.pay(address, 'ETH', '0.5', { gas: 21_000n });
    expect(native.status).toBe('success');
    await chain.pay(address, 'USDT', '12.5');
    await chain.pay(address, 'USDC', '3');
    const before = { usdt: await tokenBalance(usdt, ORG_WALLET), native: await nativeBalance(ORG_WALLET) };
    const receipt = await collect(STRANGER, ORG_WALLET, ['cs_stranger']);
    expect(receipt.status).toBe('success');
    expect(await tokenBalance(usdt, ORG_WALLET)).toBe(before.usdt + 12_500_000n);
    expect(await nativeBalance(ORG_WALLET)).toBe(before.native + 5n * 10n ** 17n);
    expect(await tokenBalance(usdt, address)).toBe(0n);
    expect(await tokenBalance(usdc, address)).toBe(0n);
    expect(await nativeBalance(address)).toBe(0n);
    expect(await code(address)).toBe('0x'); // created and destroyed in one transaction (EIP-6780)
  });

  it('after a collect still receives, and is collected again to the same wallet', async () => {
    const address = depositAddress(ORG_WALLET, 'cs_twice');
    await chain.pay(address, 'USDT', '1');
    await collect(STRANGER, ORG_WALLET, ['cs_twice']);
    const native = await chain.pay(address, 'ETH', '0.25', { gas: 21_000n });
    expect(native.status).toBe('success');
    await chain.pay(address, 'USDT', '2');
    const before = { usdt: await tokenBalance(usdt, ORG_WALLET), native: await nativeBalance(ORG_WALLET) };
    expect((await collect(4, ORG_WALLET, ['cs_twice'])).status).toBe('success');
    expect(await tokenBalance(usdt, ORG_WALLET)).toBe(before.usdt + 2_000_000n);
    expect(await nativeBalance(ORG_WALLET)).toBe(before.native + 25n * 10n ** 16n);
    expect(await code(address)).toBe('0x');
  });

  it('a collect naming another destination reaches another address and moves nothing from this one', async () => {
    const address = depositAddress(ORG_WALLET, 'cs_redirect');
    await chain.pay(address, 'USDT', '7');
    await chain.pay(address, 'ETH', '0.1');
    const thief = sandboxAccount(STRANGER).address;
    const before = await tokenBalance(usdt, thief);
    expect((await collect(STRANGER, thief, ['cs_redirect'])).status).toBe('success');
    expect(await tokenBalance(usdt, thief)).toBe(before);
    expect(await tokenBalance(usdt, address)).toBe(7_000_000n);
    expect(await nativeBalance(address)).toBe(10n ** 17n);
    // The parameters are only readable while collect runs; nobody can set them otherwise.
    await expect(
      client.readContract({
        address: depositFactoryAddress(),
        abi: depositFactoryArtefact().abi,
        functionName: 'sweepParameters',
      }),
    ).rejects.toThrow(/NotCollecting/);
  });

  it('a token that re-enters collect during a batch cannot change where the rest of the batch goes', async () => {
    const evil = await deployReentrantToken();
    const thief = sandboxAccount(STRANGER).address;
    const victim = depositAddress(ORG_WALLET, 'cs_victim');
    await chain.pay(victim, 'USDT', '9');
    await chain.pay(depositAddress(thief, 'cs_thief'), 'USDT', '0.000001');
    const before = await tokenBalance(usdt, ORG_WALLET);
    // The evil token is swept first in the first session; its transfer calls collect(thief, …) back.
    const receipt = await collect(STRANGER, ORG_WALLET, ['cs_first', 'cs_victim'], [evil, usdt]);
    expect(receipt.status).toBe('success');
    expect(await tokenBalance(usdt, ORG_WALLET)).toBe(before + 9_000_000n);
    expect(await tokenBalance(usdt, victim)).toBe(0n);
    // Both sweepers called it back; the factory refused both times.
    expect(await client.readContract({ address: evil, abi: REENTRANT_ABI, functionName: 'attempts' })).toBe(2n);
    expect(await client.readContract({ address: evil, abi: REENTRANT_ABI, functionName: 'reentered' })).toBe(0n);
  });

  it('leads to the wallet it was made for: a new wallet gives new addresses, old ones still pay the old wallet', async () => {
    const old = depositAddress(ORG_WALLET, 'cs_moved');
    const fresh = depositAddress(NEW_WALLET, 'cs_moved');
    expect(fresh).not.toBe(old);
    await chain.pay(old, 'USDT', '5');
    await chain.pay(fresh, 'USDT', '6');
    const before = await tokenBalance(usdt, ORG_WALLET);
    await collect(STRANGER, NEW_WALLET, ['cs_moved']);
    await collect(STRANGER, ORG_WALLET, ['cs_moved']);
    expect(await tokenBalance(usdt, getAddress(NEW_WALLET))).toBe(6_000_000n);
    expect(await tokenBalance(usdt, ORG_WALLET)).toBe(before + 5_000_000n);
  });

  it('a batch collects many sessions in one transaction; an id twice in one batch is refused', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `cs_batch_${i}`);
    for (const id of ids) await chain.pay(depositAddress(ORG_WALLET, id), 'USDT', '1');
    const before = await tokenBalance(usdt, ORG_WALLET);
    expect((await collect(STRANGER, ORG_WALLET, ids)).status).toBe('success');
    expect(await tokenBalance(usdt, ORG_WALLET)).toBe(before + 10_000_000n);
    await expect(collect(STRANGER, ORG_WALLET, ['cs_dup', 'cs_dup'])).rejects.toThrow(/NotCollected|revert/);
  });
});

// A token whose transfer() re-enters the factory with another destination, as a hostile token in a collector's list
// could. Compiled here (tests only) with the same offline solc.
const REENTRANT_SOURCE = `
pragma solidity ^0.8.28;
interface IFactory { function collect(address, bytes32[] calldata, address[] calldata) external; }
contract ReentrantToken {
    address immutable factory; address immutable thief; uint256 public attempts; uint256 public reentered;
    constructor(address f, address t) { factory = f; thief = t; }
    function balanceOf(address) external pure returns (uint256) { return 1; }
    function transfer(address, uint256) external returns (bool) {
        attempts += 1;
        bytes32[] memory ids = new bytes32[](1);
        ids[0] = keccak256(bytes("cs_thief"));
        try IFactory(factory).collect(thief, ids, new address[](0)) { reentered += 1; } catch {}
        return true;
    }
}`;
const REENTRANT_ABI = parseAbi([
  'function attempts() view returns (uint256)',
  'function reentered() view returns (uint256)',
]);

async function deployReentrantToken(): Promise<Hex> {
  const solc = createRequire(import.meta.url)('solc') as { compile(input: string): string };
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'ReentrantToken.sol': { content: REENTRANT_SOURCE } },
        settings: { evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
      }),
    ),
  ) as { contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>> };
  const built = output.contracts['ReentrantToken.sol']!.ReentrantToken!;
  const wallet = walletOf(STRANGER);
  const hash = await wallet.deployContract({
    abi: built.abi,
    bytecode: `0x${built.evm.bytecode.object}`,
    args: [depositFactoryAddress(), sandboxAccount(STRANGER).address],
  });
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 25 });
  return receipt.contractAddress!;
}
