// Chain watcher throughput: ERC-20 Transfer logs decoded and matched to watched wallets, per second.
//   Kassa:    decodeTransferLogs (dist/chain/transfer-logs.js): token lookup, wallet match, exact amount
//   baseline: viem's generic decodeEventLog per log + the same Set lookup of the recipient
// Both run over the same synthetic eth_getLogs answer in the same process.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeEventLog, parseAbi } from 'viem';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { blocksOf, decodeTransferLogs, tokenIndex, addressTopic, TRANSFER_TOPIC } = await import(
  path.join(root, 'dist/chain/transfer-logs.js')
);

const registry = JSON.parse(readFileSync(path.join(root, 'config/networks.json'), 'utf8'));
const network = { ...registry.networks.find((n) => n.slug === 'bsc'), rpcUrls: [] };
const tokens = tokenIndex(network);
const tokenAddresses = [...tokens.keys()];
const wallets = Array.from({ length: 1000 }, () => `0x${randomBytes(20).toString('hex')}`);
const watched = new Set(wallets.slice(0, 500));

function syntheticLogs(count) {
  const logs = [];
  for (let i = 0; i < count; i += 1) {
    const to = wallets[i % wallets.length];
    logs.push({
      address: tokenAddresses[i % tokenAddresses.length],
      topics: [TRANSFER_TOPIC, addressTopic(`0x${randomBytes(20).toString('hex')}`), addressTopic(to)],
      data: `0x${(BigInt(i + 1) * 10n ** 15n).toString(16).padStart(64, '0')}`,
      blockNumber: `0x${(1000 + Math.floor(i / 200)).toString(16)}`,
      blockHash: `0x${randomBytes(32).toString('hex')}`,
      transactionHash: `0x${randomBytes(32).toString('hex')}`,
      logIndex: `0x${(i % 200).toString(16)}`,
      removed: false,
    });
  }
  return logs;
}

const abi = parseAbi(['event Transfer(address indexed from, address indexed to, uint256 value)']);
function baseline(logs) {
  let matched = 0;
  for (const log of logs) {
    const { args } = decodeEventLog({ abi, data: log.data, topics: log.topics });
    if (tokens.has(log.address) && watched.has(args.to.toLowerCase()) && args.value > 0n) matched += 1;
  }
  return matched;
}

function measure(name, work, logs, seconds) {
  work(logs.slice(0, 5000)); // warm up the JIT
  let processed = 0;
  let matched = 0;
  const started = process.hrtime.bigint();
  const budget = BigInt(Math.round(seconds * 1e9));
  while (process.hrtime.bigint() - started < budget) {
    matched = work(logs);
    processed += logs.length;
  }
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  return { name, logsPerSecond: processed / elapsed, matchedPerBatch: matched };
}

export function runChainDecodeBench(seconds = 3) {
  const logs = syntheticLogs(20_000);
  // The blocks holding matches are found in the same pass; their times come from the node in the watcher (here: known).
  const blockTimes = new Map([...blocksOf(logs, watched).keys()].map((hash) => [hash, new Date(0)]));
  const kassa = measure(
    'Transfer logs — Kassa decode+match',
    (batch) => decodeTransferLogs(batch, network, tokens, watched, (blocksOf(batch, watched), blockTimes)).length,
    logs,
    seconds,
  );
  const base = measure('Transfer logs — viem decodeEventLog baseline', baseline, logs, seconds);
  if (kassa.matchedPerBatch !== base.matchedPerBatch)
    throw new Error(`decoders disagree: ${kassa.matchedPerBatch} vs ${base.matchedPerBatch}`);
  return { kassa, baseline: base, ratio: kassa.logsPerSecond / base.logsPerSecond };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const result = runChainDecodeBench(Number(process.env.BENCH_SECONDS ?? 3));
  for (const r of [result.kassa, result.baseline])
    console.log(`${r.name.padEnd(48)}${Math.round(r.logsPerSecond).toLocaleString('en')} logs/s`);
  console.log(`ratio (Kassa ÷ baseline): ${result.ratio.toFixed(2)}`);
}
