import type { Command } from 'commander';
import { isUuid } from '../domain/shared/uuid.js';
import { describeAmount } from '../domain/payments/payments.js';
import type { PaymentRecord } from '../domain/payments/payment-ports.js';
import { invalid, notFound } from '../domain/shared/errors.js';
import { printJson, printLine } from './output.js';
import { withRuntime } from './with-runtime.js';

function paymentJson(payment: PaymentRecord) {
  return {
    id: payment.id,
    network: payment.network,
    chain_id: payment.chainId,
    tx_hash: payment.txHash,
    log_index: payment.logIndex,
    from: payment.from,
    to: payment.to,
    asset: payment.asset,
    token_address: payment.tokenAddress,
    amount: payment.amount.toFixed(),
    base_units: payment.baseUnits.toString(),
    block_number: payment.blockNumber.toString(),
    block_hash: payment.blockHash,
    confirmations: payment.confirmations,
    state: payment.state,
    session_id: payment.sessionId,
    attribution: payment.attribution,
    reserved_for: payment.reservedFor,
    late: payment.late,
    created_at: payment.createdAt.toISOString(),
  };
}

function printPayments(payments: readonly PaymentRecord[], json: boolean | undefined): void {
  if (json) return printJson(payments.map(paymentJson));
  if (payments.length === 0) return printLine('no payments');
  for (const p of payments) {
    printLine(
      `${p.createdAt.toISOString()}  ${p.network}  ${describeAmount(p.amount)} ${p.asset}  ${p.from} → ${p.to}  ` +
        `${p.txHash}#${p.logIndex}  ` +
        `${p.state} (${p.confirmations} conf)  ${
          p.sessionId
            ? `session ${p.sessionId} by ` + `${p.attribution}${p.late ? ', late' : ''}`
            : `unattributed${p.reservedFor ? `, reserved for session ${p.reservedFor}` : ''}`
        }`,
    );
  }
}

export function registerPaymentCommands(program: Command): void {
  const payments = program.command('payments').description('transfers the chain watcher recorded');

  payments
    .command('unattributed')
    .description('transfers to a watched wallet that could not be matched to one session')
    .option('--limit <n>', 'at most this many, oldest first', '100')
    .option('--json', 'print a JSON array')
    .action(async (options: { limit: string; json?: boolean }) => {
      if (!/^\d+$/.test(options.limit) || Number(options.limit) < 1 || Number(options.limit) > 10_000)
        throw invalid('--limit must be a whole number from 1 to 10000');
      printPayments(
        await withRuntime((ctx) => ctx.store.chain.unattributedPayments(Number(options.limit))),
        options.json,
      );
    });

  payments
    .command('list')
    .description("a session's payments, with how each was attributed")
    .requiredOption('--session <id>', 'checkout session id')
    .option('--json', 'print a JSON array')
    .action(async (options: { session: string; json?: boolean }) => {
      // A malformed id is "not found" like any unknown one (docs/operations.md#cli-reference, exit codes).
      const sessionId = isUuid(options.session) ? options.session.toLowerCase() : null;
      const payments = await withRuntime(async (ctx) => {
        if (!sessionId || !(await ctx.store.sessions.findById(sessionId)))
          throw notFound(`Checkout session ${options.session} not found`);
        return ctx.store.chain.paymentsOfSession(sessionId);
      });
      printPayments(payments, options.json);
    });
}
