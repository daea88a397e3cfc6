// Matched transfers per second, end to end (issue 10): many open sessions on one wallet, each
// paid exactly (no bind) on a real anvil; then a Kassa whose chain watcher starts from before
// the first transfer is timed until every session is paid. What it measures is the watcher's
// own work per transfer (scan, attribute, confirm, settle), not the chain's block time.
// Runs alone too: `node bench/chain-e2e.mjs` (needs a PostgreSQL and `npm run build`).
import { spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createPublicClient, createWalletClient, encodeFunctionData, http, parseAbi } from 'viem';
import { anvil as anvilChain } from 'viem/chains';
import { benchKassaEnv, freePort, kassaCli, stopChild, waitFor } from './support.mjs';

const debug = (message) => process.env.BENCH_DEBUG && process.stderr.write(`chain bench: ${message}\n`);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ERC20 = parseAbi(['function transfer(address to, uint256 amount) returns (bool)']);

function serve(env, port) {
  // BENCH_WATCHER_NODE_ARGS (e.g. --cpu-prof) are given to the watching instance only, to profile it.
  const nodeArgs =
    env.KASSA_WATCHER === 'true' && process.env.BENCH_WATCHER_NODE_ARGS
      ? process.env.BENCH_WATCHER_NODE_ARGS.split(' ')
      : [];
  return spawn('node', [...nodeArgs, path.join(root, 'bin/kassa.js'), 'serve'], {
    env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', process.env.BENCH_DEBUG ? 'inherit' : 'ignore', 'inherit'],
  });
}

export async function runChainE2eBench({ databaseUrl, sessions = Number(process.env.BENCH_CHAIN_SESSIONS ?? 200) }) {
  const { startAnvil } = await import('../dist/chain/anvil.js');
  const { ensureSandboxTokens, sandboxAccount } = await import('../dist/chain/sandbox.js');
  const registry = JSON.parse(readFileSync(path.join(root, 'config/networks.json'), 'utf8'));
  const local = registry.networks.find((n) => n.slug === 'local');
  const anvil = await startAnvil({ port: await freePort() });
  const children = [];
  try {
    debug(`anvil at ${anvil.url}`);
    await ensureSandboxTokens(anvil.url, { ...local, rpcUrls: [anvil.url] });
    debug('tokens deployed');
    const env = benchKassaEnv({
      DATABASE_URL: databaseUrl,
      KASSA_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'kassa-bench-chain-')),
      KASSA_NETWORKS: 'local',
      KASSA_RPC_URLS_LOCAL: anvil.url,
    });
    const cli = kassaCli(env);
    cli('migrate');
    const wallet = `0x${randomBytes(20).toString('hex')}`;
    const org = cli('orgs', 'create', '--name', 'Chain bench', '--receiving', 'shared', '--wallet', wallet);
    const key = cli('keys', 'create', '--org', org.id);

    // The sessions, created with the watcher off, all on one wallet: their amounts are made
    // unique by Kassa (docs/payment-rules.md, rule 4) — the case that needs no bind.
    const port = await freePort();
    const creator = serve(env, port);
    children.push(creator);
    const url = `http://127.0.0.1:${port}`;
    await waitFor(`${url}/ready`);
    const amounts = [];
    let timestamp = Date.now();
    for (let i = 0; i < sessions; i++) {
      // 37 different baskets: several sessions share each base amount, and Kassa makes them unique.
      const body = JSON.stringify({
        user: { id: 'chain-bench', email: 'b@example.com' },
        items: [{ name: 'Item', quantity: 1 + (i % 37), unit_price: 25 }],
        currency: 'USD',
      });
      timestamp = Math.max(Date.now(), timestamp + 1);
      const signature = createHmac('sha256', key.api_secret).update(`${timestamp}.${body}`).digest('hex');
      const response = await fetch(`${url}/checkout-sessions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-service-key': key.api_key,
          'x-service-timestamp': String(timestamp),
          'x-service-signature': signature,
        },
        body,
      });
      const created = await response.json();
      if (response.status !== 201)
        throw new Error(`chain bench: create answered ${response.status}: ${JSON.stringify(created)}`);
      amounts.push(created.crypto_options.find((o) => o.ticker === 'USDT').amount);
    }
    await stopChild(creator);
    debug(`${sessions} sessions created`);

    // Every session paid exactly, from four payer accounts, nonces managed here so nothing waits.
    const usdt = local.tokens.find((t) => t.ticker === 'USDT');
    const chain = { ...anvilChain, rpcUrls: { default: { http: [anvil.url] } } };
    const publicClient = createPublicClient({ chain, transport: http(anvil.url) });
    const startBlock = await publicClient.getBlockNumber({ cacheTime: 0 });
    const payers = [2, 3, 4, 5].map((index) => sandboxAccount(index));
    const nonces = await Promise.all(
      payers.map((account) => publicClient.getTransactionCount({ address: account.address })),
    );
    const hashes = [];
    for (const [i, amount] of amounts.entries()) {
      const p = i % payers.length;
      const walletClient = createWalletClient({ chain, account: payers[p], transport: http(anvil.url) });
      // 8 fractional digits on the wire, a whole number of micro-USDT (6 decimals here): drop the last two.
      const units = BigInt(amount.replace('.', '')) / 100n;
      hashes.push(
        await walletClient.sendTransaction({
          to: usdt.address,
          data: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [wallet, units] }),
          gas: 100_000n,
          nonce: nonces[p]++,
        }),
      );
    }
    await publicClient.waitForTransactionReceipt({ hash: hashes.at(-1), pollingInterval: 50 });
    const endBlock = await publicClient.getBlockNumber({ cacheTime: 0 });
    debug(`transfers mined in blocks ${startBlock}..${endBlock}`);

    // The watcher starts from before the first transfer; timed until every session is paid.
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
    pool.on('error', () => {}); // a connection cut while the bench tears down is not a result
    const watcherPort = await freePort();
    const watcher = serve(
      {
        ...env,
        KASSA_WATCHER: 'true',
        KASSA_WATCH_INTERVAL_MS: '100',
        KASSA_SCAN_BACKFILL_BLOCKS: String(Number(endBlock - startBlock) + 5),
      },
      watcherPort,
    );
    children.push(watcher);
    // Timed from when the instance is ready (its start-up is not the watcher's work) until every session is paid.
    await waitFor(`http://127.0.0.1:${watcherPort}/ready`);
    const started = Date.now();
    let paid = 0;
    while (paid < sessions) {
      if (Date.now() - started > 300_000)
        throw new Error(`chain bench: only ${paid} of ${sessions} sessions paid after 300 s`);
      await new Promise((r) => setTimeout(r, 100));
      paid = Number(
        (
          await pool.query(
            `SELECT count(*)::int AS n FROM checkout_sessions WHERE organisation_id = $1 AND status = 'paid'`,
            [org.id],
          )
        ).rows[0].n,
      );
    }
    const secondsTaken = (Date.now() - started) / 1000;
    const overpaid = Number(
      (
        await pool.query(`SELECT count(*)::int AS n FROM checkout_sessions WHERE organisation_id = $1 AND overpaid`, [
          org.id,
        ])
      ).rows[0].n,
    );
    await pool.end();
    if (overpaid > 0) throw new Error(`chain bench: ${overpaid} sessions overpaid`);
    return {
      transfers: sessions,
      seconds: secondsTaken,
      perSecond: sessions / secondsTaken,
      blocks: Number(endBlock - startBlock),
    };
  } finally {
    for (const child of children) await stopChild(child);
    await anvil.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const admin = process.env.KASSA_BENCH_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const name = `kassa_bench_chain_${process.pid}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE "${name}"`);
  try {
    console.log(
      await runChainE2eBench({ databaseUrl: Object.assign(new URL(admin), { pathname: `/${name}` }).toString() }),
    );
  } finally {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.end();
  }
}
