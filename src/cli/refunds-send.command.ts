import type { Command } from 'commander';
import type { Hex } from 'viem';
import { sandboxAccount } from '../chain/sandbox.js';
import type { DomainContext } from '../domain/context.js';
import type { Refund } from '../domain/refunds/refund.js';
import { payoutOf, refundUri, unsignedRefundTransaction } from '../domain/refunds/refund-transfer.js';
import { recordSent } from '../domain/refunds/refund-transitions.js';
import { conflict, invalid, notFound } from '../domain/shared/errors.js';
import { formatAmount } from '../domain/shared/money.js';
import { isUuid } from '../domain/shared/uuid.js';
import { connectNetwork, signerFor, SIGNER_KEY_VARIABLE } from './contracts.command.js';
import { printJson, printLine } from './output.js';
import { commandRun, terminal } from './terminal.js';
import { withRuntime } from './with-runtime.js';

/** The sandbox accounts looked through for the organisation's wallet (anvil's first ten). */
const SANDBOX_ACCOUNTS = 10;

interface SendOptions {
  unsigned?: boolean;
  keyStdin?: boolean;
  record?: string;
  json?: boolean;
}

async function readyRefund(ctx: DomainContext, id: string): Promise<Refund & { destination: string }> {
  if (!isUuid(id)) throw invalid(['id must be a UUID']);
  const refund = await ctx.store.refunds.findById(id.toLowerCase());
  if (!refund) throw notFound(`Refund ${id} not found`);
  if (refund.destination === null)
    throw conflict(`Refund ${refund.id} has no destination yet: the payer has not used the claim link`, 'refund_state');
  return refund as Refund & { destination: string };
}

/**
 * Who signs: a key from --key-stdin or KASSA_SIGNER_KEY for this run only; on the sandbox without one, the sandbox
 * account that is the organisation's wallet. Null: print the transaction for another wallet.
 */
async function refundSigner(ctx: DomainContext, refund: Refund, keyStdin: boolean) {
  if (keyStdin || terminal().env[SIGNER_KEY_VARIABLE]) return signerFor(refund.network, keyStdin);
  if (refund.network !== 'local') return null;
  const wallets = new Set(await ctx.store.refundWatch.walletsOf(refund.organisationId, refund.network));
  for (let index = 0; index < SANDBOX_ACCOUNTS; index += 1) {
    const account = sandboxAccount(index);
    if (wallets.has(account.address.toLowerCase())) return { account, source: `sandbox account ${index}` };
  }
  return null;
}

/** `kassa refunds send <id>`: the refund's transfer as an EIP-681 URI and an unsigned transaction, or sent once. */
export function registerRefundSendCommand(refunds: Command): void {
  refunds
    .command('send <id>')
    .description(
      'print the refund transfer (EIP-681 URI and unsigned transaction) or sign it with a key given for this run ' +
        '(docs/refund-claims.md#sending)',
    )
    .option('--unsigned', 'print the transfer for any wallet to send; send nothing')
    .option(
      '--key-stdin',
      `read the signing key from stdin (else ${SIGNER_KEY_VARIABLE}; local: the org's sandbox wallet)`,
    )
    .option('--record <tx-hash>', 'record the hash of the transfer sent from another wallet (the refund becomes sent)')
    .option('--json', 'print one JSON object')
    .action(async (id: string, options: SendOptions) => {
      if (options.record !== undefined && !/^0x[0-9a-fA-F]{64}$/.test(options.record))
        throw invalid('--record must be a transaction hash (0x and 64 hex digits)');
      await withRuntime(async (ctx) => {
        const refund = await readyRefund(ctx, id);
        if (options.record !== undefined) {
          const recorded = await recordSent(ctx, refund.id, { txHash: options.record });
          if (options.json) printJson({ refund_id: recorded.id, status: recorded.status, tx_hash: options.record });
          else printLine(`refund ${recorded.id} is ${recorded.status}: Kassa watches ${options.record.toLowerCase()}`);
          return;
        }
        const payout = payoutOf(refund);
        const transaction = unsignedRefundTransaction(payout);
        const described = {
          refund_id: refund.id,
          status: refund.status,
          network: refund.network,
          crypto_currency: refund.asset,
          amount: formatAmount(refund.amount),
          base_units: payout.baseUnits.toString(),
          destination: payout.destination,
          uri: refundUri(payout),
          transaction: {
            chain_id: transaction.chainId,
            to: transaction.to,
            data: transaction.data,
            value: transaction.value,
          },
        };
        if (!options.unsigned && refund.status !== 'ready')
          throw conflict(
            `Refund ${refund.id} is ${refund.status}` +
              (refund.transfer.txHash ? ` (transaction ${refund.transfer.txHash})` : '') +
              ': only a ready refund is sent (--unsigned still prints its transfer)',
            'refund_state',
          );
        const signer = options.unsigned ? null : await refundSigner(ctx, refund, options.keyStdin === true);
        if (!signer) {
          if (options.json) printJson({ ...described, mode: 'unsigned' });
          else printUnsigned(described);
          return;
        }
        const { client, walletOf } = await connectNetwork(refund.network);
        const wallet = walletOf(signer.account);
        const hash = await wallet.sendTransaction({
          account: signer.account,
          chain: wallet.chain,
          to: transaction.to as Hex,
          data: transaction.data === '0x' ? undefined : (transaction.data as Hex),
          value: BigInt(transaction.value),
        });
        await recordSent(ctx, refund.id, { txHash: hash, sentFrom: signer.account.address });
        const receipt = await client.waitForTransactionReceipt({ hash });
        if (receipt.status !== 'success') commandRun().exitCode = 1;
        if (options.json) {
          printJson({
            ...described,
            mode: 'sent',
            signer: signer.account.address.toLowerCase(),
            tx_hash: hash,
            receipt: receipt.status,
          });
          return;
        }
        printLine(`sent ${hash} from ${signer.account.address} (${signer.source}): ${receipt.status}`);
        printLine(`${described.amount} ${refund.asset} to ${payout.destination}; Kassa confirms it as the chain does`);
      });
    });
}

function printUnsigned(described: {
  refund_id: string;
  amount: string;
  crypto_currency: string;
  network: string;
  destination: string;
  uri: string;
  transaction: { chain_id: number; to: string; data: string; value: string };
}): void {
  printLine(
    `refund ${described.refund_id}: ${described.amount} ${described.crypto_currency} on ${described.network} to ` +
      `${described.destination}`,
  );
  printLine(`EIP-681: ${described.uri}`);
  printLine(`chain id: ${described.transaction.chain_id}`);
  printLine(`to: ${described.transaction.to}`);
  printLine(`value: ${described.transaction.value}`);
  printLine(`data: ${described.transaction.data}`);
  printLine(
    `not sent: send it from the wallet that received the payment, then \`kassa refunds send ${described.refund_id} ` +
      `--record <tx hash>\` (Kassa also finds it on the chain by itself)`,
  );
}
