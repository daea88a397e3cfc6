import { createPublicClient, http, type Hex, type PublicClient } from 'viem';
import type { PrismaClient } from '../generated/prisma/client.js';
import { readHoldings } from './collect.js';
import { collectGasLimit, planCollect, type CollectBatch } from './collect-batches.js';
import { collectionFromReceipt } from './collect-receipt.js';
import { depositFactoryDeployed } from './deposit-contracts.js';
import {
  depositAddressesOf,
  depositCollectionStore,
  depositSessionsAt,
} from '../db/organisations/deposit-collections.store.js';
import { recordedCollect } from '../db/dashboard/deposits.store.js';
import type { CollectProgress, DepositChain, DepositSurvey } from '../domain/dashboard/deposits/deposit-ports.js';
import { Decimal } from '../domain/shared/money.js';
import type { Network } from '../domain/shared/networks.js';

/**
 * The dashboard's deposits port over the nodes and PostgreSQL (docs/dashboard.md#deposits-and-collecting): the reads
 * and the packing of `kassa collect` (src/chain/collect.ts), and its `--record` once a collect is confirmed.
 */

/** The most gas one collect may take, as `kassa collect` defaults to (and never above half a block). */
const MAX_COLLECT_GAS = 10_000_000n;

export interface DepositChainOptions {
  /** How often a followed collect is read again. */
  readonly followEveryMs?: number;
  /** When a followed collect is given up (it can still be recorded by reading it, or by `kassa collect --record`). */
  readonly followForMs?: number;
  readonly clock?: () => Date;
}

export interface DepositChainService extends DepositChain {
  /** Stops following collects (the runtime closes). */
  stop(): void;
}

function clientFor(network: Network): PublicClient {
  const url = network.rpcUrls[0];
  if (!url) throw new Error(`${network.slug} has no RPC URL`);
  const coin = network.nativeAsset ?? 'native';
  const chain = {
    id: network.chainId,
    name: network.name,
    nativeCurrency: { name: coin, symbol: coin, decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  };
  return createPublicClient({ chain, transport: http(url, { timeout: 10_000 }) }) as PublicClient;
}

export function createDepositChain(
  networks: readonly Network[],
  prisma: PrismaClient,
  options: DepositChainOptions = {},
): DepositChainService {
  const followEveryMs = options.followEveryMs ?? 2_000;
  const followForMs = options.followForMs ?? 30 * 60_000;
  const clock = options.clock ?? (() => new Date());
  const clients = new Map<string, PublicClient>();
  const followed = new Map<string, ReturnType<typeof setTimeout>>();
  let stopped = false;

  const networkOf = (slug: string): Network => {
    const network = networks.find((n) => n.slug === slug);
    if (!network) throw new Error(`network ${slug} is not enabled`);
    return network;
  };
  const clientOf = (network: Network) => {
    let client = clients.get(network.slug);
    if (!client) clients.set(network.slug, (client = clientFor(network)));
    return client;
  };

  async function survey(organisationId: string, slug: string): Promise<DepositSurvey> {
    const network = networkOf(slug);
    const addresses = await depositAddressesOf(prisma, organisationId, slug);
    const base = { network: slug, chainId: network.chainId, depositAddresses: addresses.length };
    if (addresses.length === 0) return { ...base, holdings: [], collects: [] };
    const client = clientOf(network);
    const holdings = await readHoldings(client, network, addresses);
    const maxGas = await collectGasLimit(client, MAX_COLLECT_GAS);
    const batches: CollectBatch[] =
      holdings.length === 0 ? [] : await planCollect(client, holdings, maxGas, holdings[0]!.destination as Hex);
    return {
      ...base,
      holdings: holdings.map((holding) => ({
        sessionId: holding.sessionId,
        balances: holding.balances.map((balance) => ({
          asset: balance.asset,
          decimals: balance.decimals,
          units: balance.units,
        })),
      })),
      collects: batches.map((batch) => ({
        destination: batch.destination,
        sessionIds: batch.holdings.map((holding) => holding.sessionId),
        to: batch.to,
        data: batch.data,
        gas: batch.gas,
      })),
    };
  }

  async function progress(organisationId: string, slug: string, txHash: string): Promise<CollectProgress> {
    const network = networkOf(slug);
    const base = { network: slug, txHash, confirmationsRequired: network.confirmations };
    const recorded = await recordedCollect(prisma, organisationId, slug, txHash);
    if (recorded)
      return {
        ...base,
        state: 'confirmed',
        confirmations: network.confirmations,
        blockNumber: recorded.blockNumber,
        collected: recorded.items.map((item) => ({ ...item, amount: new Decimal(item.amount) })),
      };
    const client = clientOf(network);
    const receipt = await client.getTransactionReceipt({ hash: txHash as Hex }).catch(() => null);
    if (!receipt) {
      const known = await client.getTransaction({ hash: txHash as Hex }).catch(() => null);
      return { ...base, state: known ? 'pending' : 'unknown', confirmations: 0, blockNumber: null, collected: [] };
    }
    const mined = { ...base, blockNumber: receipt.blockNumber, collected: [] };
    if (receipt.status !== 'success') return { ...mined, state: 'reverted', confirmations: 0 };
    const confirmations = Number((await client.getBlockNumber()) - receipt.blockNumber + 1n);
    if (confirmations < network.confirmations) return { ...mined, state: 'confirming', confirmations };
    const sessionsAt = (addresses: string[]) => depositSessionsAt(prisma, organisationId, slug, addresses);
    const collection = await collectionFromReceipt(client, network, organisationId, receipt, sessionsAt);
    if (!collection) return { ...mined, state: 'nothing', confirmations };
    await depositCollectionStore(prisma).record(collection, clock());
    // Recorded by now, by this call or by another instance's: what the record says.
    const again = await recordedCollect(prisma, organisationId, slug, txHash);
    if (!again) return { ...mined, state: 'nothing', confirmations };
    const collected = again.items.map((item) => ({ ...item, amount: new Decimal(item.amount) }));
    return { ...mined, state: 'confirmed', confirmations, collected };
  }

  function follow(organisationId: string, slug: string, txHash: string): void {
    const key = `${organisationId}:${slug}:${txHash}`;
    if (stopped || followed.has(key)) return;
    const until = Date.now() + followForMs;
    const again = () => {
      const timer = setTimeout(async () => {
        let done = false;
        try {
          const state = (await progress(organisationId, slug, txHash)).state;
          done = !['unknown', 'pending', 'confirming'].includes(state);
        } catch {
          // A node or database that does not answer now may answer at the next read.
        }
        if (done || stopped || Date.now() > until) followed.delete(key);
        else again();
      }, followEveryMs);
      timer.unref();
      followed.set(key, timer);
    };
    again();
  }

  return {
    factoryDeployed: (slug) => depositFactoryDeployed(networkOf(slug).rpcUrls),
    survey,
    progress,
    follow,
    stop() {
      stopped = true;
      for (const timer of followed.values()) clearTimeout(timer);
      followed.clear();
    },
  };
}
