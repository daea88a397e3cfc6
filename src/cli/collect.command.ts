import type { Command } from 'commander';
import type { Hex } from 'viem';
import { readHoldings, type Holding } from '../chain/collect.js';
import { collectGasLimit, planCollect, sendCollect, type CollectBatch } from '../chain/collect-batches.js';
import { collectionFromReceipt } from '../chain/collect-receipt.js';
import {
  depositAddressesOf,
  depositCollectionStore,
  depositSessionsAt,
} from '../db/organisations/deposit-collections.store.js';
import { collectedAmount, type DepositCollection } from '../domain/organisations/deposit-collections.js';
import { findOrganisation } from '../domain/organisations/organisations.js';
import { fromBaseUnits, type Decimal } from '../domain/shared/money.js';
import { invalid } from '../domain/shared/errors.js';
import { connectNetwork, signerFor, SIGNER_KEY_VARIABLE } from './contracts.command.js';
import { printJson, printLine } from './output.js';
import { commandRun } from './terminal.js';
import { withRuntime } from './with-runtime.js';

/** The default most gas of one collect transaction (and never above half the block's gas limit). */
const DEFAULT_MAX_GAS = 10_000_000n;

interface CollectOptions {
  org: string;
  network: string;
  dryRun?: boolean;
  unsigned?: boolean;
  keyStdin?: boolean;
  maxGas?: string;
  record?: string;
  json?: boolean;
}

const plain = (value: Decimal) => value.toFixed();

function holdingJson(holding: Holding) {
  return {
    session_id: holding.sessionId,
    deposit_address: holding.depositAddress,
    destination: holding.destination,
    balances: holding.balances.map((balance) => ({
      crypto_currency: balance.asset,
      token_address: balance.token?.toLowerCase() ?? null,
      amount: plain(fromBaseUnits(balance.units, balance.decimals)),
      base_units: balance.units.toString(),
    })),
  };
}

function batchJson(batch: CollectBatch) {
  return {
    destination: batch.destination,
    session_ids: batch.holdings.map((holding) => holding.sessionId),
    tokens: batch.tokens.map((token) => token.toLowerCase()),
    to: batch.to,
    data: batch.data,
    gas: batch.gas.toString(),
  };
}

function collectionJson(collection: DepositCollection) {
  return {
    collection_id: collection.id,
    tx_hash: collection.txHash,
    block_number: collection.blockNumber.toString(),
    gas_used: collection.gasUsed.toString(),
    destination: collection.destination,
    collected: collection.items.map((item) => ({
      session_id: item.sessionId,
      deposit_address: item.depositAddress,
      crypto_currency: item.asset,
      amount: plain(collectedAmount(item)),
      base_units: item.baseUnits.toString(),
    })),
  };
}

const describeBalances = (holding: Holding) =>
  holding.balances.map((balance) => `${plain(fromBaseUnits(balance.units, balance.decimals))} ${balance.asset}`);

export function registerCollectCommand(program: Command): void {
  program
    .command('collect')
    .description(
      "move the money at an organisation's deposit addresses on a network to its wallet " +
        '(docs/operations.md#collecting-deposits)',
    )
    .requiredOption('--org <id>', 'organisation id')
    .requiredOption('--network <slug>', 'a network of the registry')
    .option('--dry-run', 'print what each address holds, the transactions and their gas; send nothing')
    .option('--unsigned', 'print the transactions (to, data, gas) for any wallet to send; send nothing')
    .option('--key-stdin', `read the signing key from stdin (else ${SIGNER_KEY_VARIABLE}; local: sandbox account 0)`)
    .option('--max-gas <gas>', `most gas of one transaction (default ${DEFAULT_MAX_GAS}, at most half a block)`)
    .option('--record <tx-hash>', 'record a collect transaction sent from another wallet, once mined')
    .option('--json', 'print one JSON object')
    .action(async (options: CollectOptions) => {
      if (options.maxGas !== undefined && !/^[1-9]\d{4,8}$/.test(options.maxGas))
        throw invalid('--max-gas must be a whole number of gas from 10000 to 999999999');
      if (options.record !== undefined && !/^0x[0-9a-fA-F]{64}$/.test(options.record))
        throw invalid('--record must be a transaction hash (0x and 64 hex digits)');
      const { network, client, walletOf } = await connectNetwork(options.network);
      await withRuntime(async (ctx, runtime) => {
        const organisation = await findOrganisation(ctx, options.org);
        const prisma = runtime.db.prisma;
        const store = depositCollectionStore(prisma);
        const sessionsAt = (addresses: string[]) => depositSessionsAt(prisma, organisation.id, network.slug, addresses);

        if (options.record !== undefined) {
          const receipt = await client.getTransactionReceipt({ hash: options.record as Hex }).catch(() => null);
          if (!receipt) throw invalid(`transaction ${options.record} is not mined on ${network.slug}`);
          const collection = await collectionFromReceipt(client, network, organisation.id, receipt, sessionsAt);
          if (!collection)
            throw invalid(
              `transaction ${options.record} collected nothing of this organisation's on ${network.slug} (nothing ` +
                `it moved came from the organisation's deposit addresses)`,
            );
          const recorded = await store.record(collection, ctx.clock());
          if (options.json) printJson({ network: network.slug, recorded, ...collectionJson(collection) });
          else
            printLine(
              recorded
                ? `recorded ${collection.txHash}: ${collection.items.length} amounts from deposit addresses`
                : `${collection.txHash} was recorded before`,
            );
          return;
        }

        const addresses = await depositAddressesOf(prisma, organisation.id, network.slug);
        const holdings = await readHoldings(client, network, addresses);
        const signer =
          options.dryRun || options.unsigned ? null : await signerFor(network.slug, options.keyStdin === true);
        const mode = options.dryRun ? 'dry_run' : signer ? 'sent' : 'unsigned';
        const maxGas = await collectGasLimit(client, options.maxGas ? BigInt(options.maxGas) : DEFAULT_MAX_GAS);
        // Who would send them: the estimate does not depend on it.
        const from = (signer?.account.address ?? holdings[0]?.destination) as Hex;
        const batches = holdings.length === 0 ? [] : await planCollect(client, holdings, maxGas, from);

        const sent: Array<{ batch: CollectBatch; status: string; txHash: Hex; collection: DepositCollection | null }> =
          [];
        if (signer) {
          const wallet = walletOf(signer.account);
          for (const batch of batches) {
            const receipt = await sendCollect(client, wallet, batch);
            const collection = await collectionFromReceipt(client, network, organisation.id, receipt, sessionsAt);
            if (collection) await store.record(collection, ctx.clock());
            sent.push({ batch, status: receipt.status, txHash: receipt.transactionHash, collection });
            if (receipt.status !== 'success') commandRun().exitCode = 1;
          }
        }

        if (options.json) {
          printJson({
            organisation_id: organisation.id,
            network: network.slug,
            mode,
            signer: signer?.account.address ?? null,
            deposit_addresses: addresses.length,
            holdings: holdings.map(holdingJson),
            transactions: batches.map((batch) => {
              const outcome = sent.find((one) => one.batch === batch);
              return {
                ...batchJson(batch),
                ...(outcome
                  ? {
                      tx_hash: outcome.txHash,
                      status: outcome.status,
                      collection: outcome.collection ? collectionJson(outcome.collection) : null,
                    }
                  : {}),
              };
            }),
          });
          return;
        }
        printLine(
          `${organisation.name} on ${network.slug}: ${holdings.length} of ${addresses.length} deposit addresses ` +
            `hold money`,
        );
        for (const holding of holdings)
          printLine(`  ${holding.sessionId}  ${holding.depositAddress}  ${describeBalances(holding).join(', ')}`);
        batches.forEach((batch, index) => {
          printLine(
            `transaction ${index + 1} of ${batches.length}: ${batch.holdings.length} sessions to ` +
              `${batch.destination}, gas ${batch.gas}`,
          );
          const outcome = sent.find((one) => one.batch === batch);
          if (outcome)
            printLine(
              outcome.status === 'success'
                ? `  sent ${outcome.txHash}, signed by ${signer!.account.address} from ${signer!.source}`
                : `  ${outcome.txHash} reverted: nothing moved`,
            );
          else if (mode === 'unsigned') {
            printLine(`  to: ${batch.to}`);
            printLine(`  gas: ${batch.gas}`);
            printLine(`  data: ${batch.data}`);
          }
        });
        if (mode === 'unsigned' && batches.length > 0)
          printLine(
            `not sent: send these from any wallet, then record each with ` +
              `\`kassa collect --org ${organisation.id} --network ${network.slug} --record <tx hash>\``,
          );
        if (batches.length === 0) printLine('nothing to collect');
      });
    });
}
