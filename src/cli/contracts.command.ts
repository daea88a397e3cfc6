import type { Command } from 'commander';
import { createPublicClient, createWalletClient, http, isAddress, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount, type LocalAccount } from 'viem/accounts';
import { rpcChainId } from '../chain/anvil.js';
import {
  DETERMINISTIC_DEPLOYER,
  MULTICALL3_ADDRESS,
  depositAddress,
  depositFactoryAddress,
  deployDepositFactory,
  sweeperInitCodeHash,
} from '../chain/deposit-contracts.js';
import { DEPLOYER_ACCOUNT, sandboxAccount } from '../chain/sandbox.js';
import { loadConfig } from '../config.js';
import { invalid, unavailable } from '../domain/shared/errors.js';
import { printJson, printLine } from './output.js';
import { terminal } from './terminal.js';

/** The environment variable a signing key may be given in, for one run; Kassa never stores it. */
export const SIGNER_KEY_VARIABLE = 'KASSA_SIGNER_KEY';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The signing account: a key from --key-stdin or KASSA_SIGNER_KEY, for this run only; on the `local` sandbox without
 * either, the sandbox's funded deployer (as `kassa dev pay` uses). Null elsewhere without a key.
 */
export async function signerFor(
  network: string,
  keyStdin: boolean,
): Promise<{ account: LocalAccount; source: string } | null> {
  const fromEnv = terminal().env[SIGNER_KEY_VARIABLE];
  const key = keyStdin ? (await readStdin()).trim() : fromEnv?.trim();
  if (key) {
    const hex = key.startsWith('0x') ? key : `0x${key}`;
    if (!/^0x[0-9a-fA-F]{64}$/.test(hex)) {
      throw invalid(`the signing key (${keyStdin ? 'stdin' : SIGNER_KEY_VARIABLE}) must be 32 bytes of hex`);
    }
    return { account: privateKeyToAccount(hex as Hex), source: keyStdin ? 'stdin' : SIGNER_KEY_VARIABLE };
  }
  if (network === 'local') return { account: sandboxAccount(DEPLOYER_ACCOUNT), source: 'sandbox account 0' };
  return null;
}

async function signer(network: string, keyStdin: boolean): Promise<{ account: LocalAccount; source: string }> {
  const found = await signerFor(network, keyStdin);
  if (found) return found;
  throw invalid(
    `deploying on ${network} needs a funded account's key: pipe it in with --key-stdin or set ` +
      `${SIGNER_KEY_VARIABLE} for this one run; Kassa does not keep it`,
  );
}

/** A network of the configured registry, its node checked to serve that chain, and viem clients for it. */
export async function connectNetwork(slug: string) {
  const config = loadConfig(terminal().env);
  const network = config.networks.find((n) => n.slug === slug);
  if (!network) {
    throw invalid(`unknown network ${slug}: one of ${config.networks.map((n) => n.slug).join(', ') || '(none)'}`);
  }
  const url = network.rpcUrls[0];
  const served = url ? await rpcChainId(url, 5_000) : null;
  if (!url || served === null) throw unavailable(`no node answers at ${url ?? '(no RPC URL)'} for ${network.slug}`);
  if (served !== network.chainId) {
    throw invalid(`${url} serves chain id ${served}, not ${network.slug}'s ${network.chainId}`);
  }
  const coin = network.nativeAsset ?? 'native';
  const chain = {
    id: network.chainId,
    name: network.name,
    nativeCurrency: { name: coin, symbol: coin, decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  };
  const client = createPublicClient({ chain, transport: http(url) }) as PublicClient;
  const walletOf = (account: LocalAccount) => createWalletClient({ chain, account, transport: http(url) });
  return { network, url, client, walletOf };
}

export function registerContractsCommands(program: Command): void {
  const contracts = program
    .command('contracts')
    .description('the deposit contracts: the factory that gives each session its deposit address');

  contracts
    .command('address')
    .description("print the deposit factory's address (the same on every chain), or one session's deposit address")
    .option('--wallet <address>', 'the wallet the deposit address leads to, for good (with --session)')
    .option('--session <id>', 'a checkout session id (with --wallet)')
    .option('--json', 'print one JSON object')
    .action((options: { wallet?: string; session?: string; json?: boolean }) => {
      if ((options.wallet === undefined) !== (options.session === undefined))
        throw invalid('--wallet and --session go together');
      if (options.wallet !== undefined && (!isAddress(options.wallet, { strict: false }) || !BigInt(options.wallet)))
        throw invalid('--wallet must be an EVM address (0x and 40 hex digits), not the zero address');
      const factory = depositFactoryAddress();
      const deposit =
        options.wallet !== undefined && options.session !== undefined
          ? depositAddress(options.wallet, options.session, factory)
          : null;
      if (options.json) {
        printJson({
          factory,
          deterministic_deployer: DETERMINISTIC_DEPLOYER,
          sweeper_init_code_hash: sweeperInitCodeHash(),
          multicall3: MULTICALL3_ADDRESS,
          ...(deposit ? { wallet: options.wallet, session_id: options.session, deposit_address: deposit } : {}),
        });
        return;
      }
      if (deposit) {
        printLine(deposit);
        return;
      }
      printLine(`deposit factory: ${factory} (on every chain, deployed through ${DETERMINISTIC_DEPLOYER})`);
      printLine(`sweeper init code hash: ${sweeperInitCodeHash()}`);
    });

  contracts
    .command('deploy')
    .description('deploy the deposit factory on a network (through the deterministic deployer; safe to repeat)')
    .requiredOption('--network <slug>', 'a network of the registry')
    .option('--key-stdin', `read the signing key from stdin (else ${SIGNER_KEY_VARIABLE}; local: sandbox account 0)`)
    .option('--json', 'print one JSON object')
    .action(async (options: { network: string; keyStdin?: boolean; json?: boolean }) => {
      const { network, client, walletOf } = await connectNetwork(options.network);
      const { account, source } = await signer(network.slug, options.keyStdin === true);
      const wallet = walletOf(account);
      const deployment = await deployDepositFactory(client, wallet);
      if (options.json) {
        printJson({
          network: network.slug,
          factory: deployment.address,
          deployed: deployment.txHash !== null,
          tx_hash: deployment.txHash,
          signer: deployment.txHash ? account.address : null,
        });
        return;
      }
      printLine(
        deployment.txHash
          ? `deployed the deposit factory at ${deployment.address} on ${network.slug} ` +
              `(transaction ${deployment.txHash}, signed by ${account.address} from ${source})`
          : `the deposit factory is already deployed at ${deployment.address} on ${network.slug}`,
      );
    });
}
