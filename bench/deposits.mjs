// Gas per collected session (issue 34): sessions' deposit addresses paid on a real anvil, then collected by the
// deposit factory in batches of 1 and of 50, for a 6-decimal token (the sandbox's USDT) and for the native coin.
// Gas is the collect transaction's gasUsed (after refunds) divided by its sessions; the organisation's wallet
// already holds the token, as a merchant's does. The token rows list only that token to collect; the registry rows
// list every token of the sandbox network (what a collector that does not look at balances first would send). Goal: at most 80,000 gas per token session in a batch of 50.
// Runs alone too: `node bench/deposits.mjs` (needs `npm run build`).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPublicClient, createWalletClient, encodeFunctionData, http, parseAbi } from 'viem';
import { anvil as anvilChain } from 'viem/chains';
import { freePort } from './support.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ERC20 = parseAbi(['function transfer(address to, uint256 amount) returns (bool)']);

export async function runDepositsBench({ batches = [1, 50] } = {}) {
  const { startAnvil } = await import('../dist/chain/anvil.js');
  const { ensureSandboxTokens, ensureDepositContracts, sandboxAccount } = await import('../dist/chain/sandbox.js');
  const { collectCalldata, depositAddress, depositFactoryAddress } = await import('../dist/chain/deposit-contracts.js');
  const registry = JSON.parse(readFileSync(path.join(root, 'config/networks.json'), 'utf8'));
  const anvil = await startAnvil({ port: await freePort() });
  try {
    const local = { ...registry.networks.find((n) => n.slug === 'local'), rpcUrls: [anvil.url] };
    await ensureSandboxTokens(anvil.url, local);
    await ensureDepositContracts(anvil.url, local);
    const chain = { ...anvilChain, rpcUrls: { default: { http: [anvil.url] } } };
    const client = createPublicClient({ chain, transport: http(anvil.url) });
    const payer = createWalletClient({ chain, account: sandboxAccount(2), transport: http(anvil.url) });
    const collector = createWalletClient({ chain, account: sandboxAccount(7), transport: http(anvil.url) });
    const destination = sandboxAccount(1).address;
    const token = local.tokens.find((t) => t.ticker === 'USDT');
    if (token.decimals !== 6) throw new Error('the sandbox USDT is expected to have 6 decimals');
    const mined = (hash) => client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    const tokenList = { token: [token.address], registry: local.tokens.map((t) => t.address), native: [] };
    const rows = [];
    let serial = 0;
    // 'registry': the same token sessions collected with every registry token in the list (the others hold nothing).
    for (const kind of ['token', 'registry', 'native']) {
      for (const size of batches) {
        const ids = Array.from({ length: size }, () => `cs_bench_${kind}_${(serial += 1)}`);
        let last;
        for (const id of ids) {
          const to = depositAddress(destination, id);
          last =
            kind !== 'native'
              ? await payer.sendTransaction({
                  to: token.address,
                  data: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [to, 12_340_000n] }),
                })
              : await payer.sendTransaction({ to, value: 10n ** 16n, gas: 21_000n });
        }
        await mined(last);
        const receipt = await mined(
          await collector.sendTransaction({
            to: depositFactoryAddress(),
            data: collectCalldata(destination, ids, tokenList[kind]),
            gas: 30_000_000n,
          }),
        );
        if (receipt.status !== 'success') throw new Error(`the ${kind} collect of ${size} reverted`);
        rows.push({ kind, batch: size, gasUsed: Number(receipt.gasUsed), perSession: Number(receipt.gasUsed) / size });
      }
    }
    const tokenOf50 = rows.find((r) => r.kind === 'token' && r.batch === 50);
    return { rows, goal: 80_000, tokenBatch50PerSession: tokenOf50?.perSession ?? null };
  } finally {
    await anvil.stop();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(JSON.stringify(await runDepositsBench(), null, 2));
}
