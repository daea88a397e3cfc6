import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, http, type PublicClient } from 'viem';
import { anvil as anvilChain } from 'viem/chains';
import { startAnvil, type AnvilProcess } from '../../src/chain/anvil.js';
import { deployDepositFactory, depositFactoryAddress } from '../../src/chain/deposit-contracts.js';
import { sandboxAccount } from '../../src/chain/sandbox.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logging.js';
import { startServer } from '../../src/server.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { freePort, parseJsonOutput, runKassaInProcess } from '../support/cli-process.js';

/**
 * Production start (docs/operations.md#receiving-modes): an organisation in deposit mode on a network whose node shows
 * no deposit factory stops `kassa serve` with the exact command that deploys it; once deployed, it starts. A real
 * anvil serving BNB Smart Chain's chain id, a real PostgreSQL, the server in this process.
 */

let chain: AnvilProcess;
let database: TestDatabase;
let env: Record<string, string>;

beforeAll(async () => {
  chain = await startAnvil({ port: await freePort(), chainId: 56 });
  database = await createTestDatabase('postgres');
  env = {
    KASSA_ENV: 'production',
    LOG_LEVEL: 'silent',
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: database.databaseUrl!,
    KASSA_DATA_DIR: database.dataDir,
    KASSA_MASTER_KEY: randomBytes(32).toString('hex'),
    CHECKOUT_BASE_URL: 'https://pay.example.com',
    KASSA_NETWORKS: 'bsc',
    KASSA_RPC_URLS_BSC: chain.url,
    KASSA_WATCHER: 'false',
    // Never asked here (nothing is created); production wants a real source.
    KASSA_COINGECKO_URL: 'http://127.0.0.1:9/api/v3',
    KASSA_RATES_SOURCES: 'coingecko',
    KASSA_RATES_MIN_SOURCES: '1',
    KASSA_METRICS_TOKEN: randomBytes(16).toString('hex'),
  };
}, 60_000);

afterAll(async () => {
  await chain?.stop();
  await database?.drop();
});

const start = () => startServer(loadConfig(env), createLogger('silent'));

describe('production start with an organisation in deposit mode', { timeout: 60_000 }, () => {
  it('starts while every organisation uses the shared wallet, even where the factory is not deployed', async () => {
    const shared = await runKassaInProcess(
      [
        'orgs',
        'create',
        '--name',
        'Shared',
        '--wallet',
        '0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc',
        '--receiving',
        'shared',
        '--json',
      ],
      env,
    );
    expect(shared.stderr).toBe('');
    const running = await start();
    await running.stop();
  });

  it('refuses, naming `kassa contracts deploy --network bsc`, until the factory is deployed there', async () => {
    const created = await runKassaInProcess(
      [
        'orgs',
        'create',
        '--name',
        'Deposits',
        '--wallet',
        '0x15d34aaf54267db7d7c367839aaf71a00a2c6a65',
        '--receiving',
        'deposit',
        '--json',
      ],
      env,
    );
    expect(created.stderr).toBe('');
    expect(parseJsonOutput<{ receiving_mode: string }>(created).receiving_mode).toBe('deposit_addresses');

    await expect(start()).rejects.toThrow(
      `Organisations use deposit addresses on bsc, where the deposit factory (${depositFactoryAddress()}) is not ` +
        'deployed, so money paid there could not be collected: run `kassa contracts deploy --network bsc`',
    );
    // The same words on the command line, exit code 1.
    const refused = await runKassaInProcess(['serve'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('run `kassa contracts deploy --network bsc`');

    const bsc = { ...anvilChain, id: 56, rpcUrls: { default: { http: [chain.url] } } };
    await deployDepositFactory(
      createPublicClient({ chain: bsc, transport: http(chain.url) }) as PublicClient,
      createWalletClient({ chain: bsc, account: sandboxAccount(4), transport: http(chain.url) }),
    );
    const running = await start();
    await running.stop();
  });
});
