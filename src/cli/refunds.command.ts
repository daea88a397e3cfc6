import type { Command } from 'commander';
import { invalid, notFound } from '../domain/shared/errors.js';
import { isUuid } from '../domain/shared/uuid.js';
import { Decimal } from '../domain/shared/money.js';
import { createRefund } from '../domain/refunds/create-refund.js';
import { cancelRefund } from '../domain/refunds/refund-transitions.js';
import { getRefund, listSessionRefunds } from '../domain/refunds/refunds.js';
import { toRefundView, type RefundView } from '../domain/refunds/refund.views.js';
import type { Refund } from '../domain/refunds/refund.js';
import { parseCreateRefund } from '../rest/refunds.schema.js';
import { printJson, printLine } from './output.js';
import { withRuntime } from './with-runtime.js';

/** `kassa refunds create|list|show|cancel` (docs/api/refunds.md#cli): the REST routes' use-cases and rules. */

interface CreateOptions {
  org: string;
  session: string;
  kind: string;
  basis?: string;
  amount?: string;
  amountFiat?: string;
  asset?: string;
  network?: string;
  destination?: string;
  claimExpiresInMinutes?: string;
  note?: string;
  idempotencyKey?: string;
  json?: boolean;
}

// As elsewhere in the CLI, an id that is not a UUID is "not found" (exit 4).
function checkId(id: string, what: string): string {
  if (!isUuid(id)) throw notFound(`${what} ${id} not found`);
  return id.toLowerCase();
}

/** A number option as the REST body would carry it (an exact JSON number), or the text when it is not one. */
const number = (text: string) => (/^-?\d+(\.\d+)?$/.test(text.trim()) ? new Decimal(text.trim()) : text);

/** The same body POST /checkout-sessions/:id/refunds takes, checked by the same schema. */
function createBody(options: CreateOptions): unknown {
  return {
    kind: options.kind,
    ...(options.basis !== undefined ? { basis: options.basis } : {}),
    ...(options.amount !== undefined ? { amount: options.amount } : {}),
    ...(options.amountFiat !== undefined ? { amount_fiat: options.amountFiat } : {}),
    ...(options.asset !== undefined ? { crypto_currency: options.asset.toUpperCase() } : {}),
    ...(options.network !== undefined ? { network: options.network } : {}),
    ...(options.destination !== undefined ? { destination: options.destination } : {}),
    ...(options.claimExpiresInMinutes !== undefined
      ? { claim_expires_in_minutes: number(options.claimExpiresInMinutes) }
      : {}),
    ...(options.note !== undefined ? { note: options.note } : {}),
  };
}

/** One line: id, status, kind, amount, where it goes (or the claim link). */
export function describeRefund(view: RefundView): string {
  const where = view.destination ? `→ ${view.destination} (${view.destination_source})` : `claim: ${view.claim_url}`;
  const tx = view.tx_hash ? `  tx ${view.tx_hash}` : '';
  return (
    `${view.id}  ${view.status.padEnd(20)}  ${view.kind.padEnd(6)}  ${view.amount} ${view.crypto_currency} on ` +
    `${view.network}  ${where}${tx}`
  );
}

/** A subcommand another module adds to `kassa refunds` (e.g. `send`): it gets the group and registers itself. */
export type RefundSubcommand = (refunds: Command) => void;

/** Registers `kassa refunds` and its subcommands, then `extensions`; returns the group. */
export function registerRefundCommands(program: Command, extensions: readonly RefundSubcommand[] = []): Command {
  const refunds = program.command('refunds').description("refunds of an organisation's sessions (docs/api/refunds.md)");
  const show = (json: boolean | undefined, refund: Refund, checkoutBaseUrl: string) => {
    const view = toRefundView(refund, checkoutBaseUrl);
    return json ? view : describeRefund(view);
  };
  const print = (output: unknown) => (typeof output === 'string' ? printLine(output) : printJson(output));

  refunds
    .command('create')
    .description('refund a session: all received (full), the overpaid excess, or a part; to an address or a claim link')
    .requiredOption('--org <id>', 'organisation id')
    .requiredOption('--session <id>', 'checkout session id')
    .requiredOption('--kind <kind>', 'full, excess or part')
    .option('--basis <basis>', 'token (default) or fiat')
    .option('--amount <amount>', 'kind part: the amount in the asset')
    .option('--amount-fiat <amount>', "kind part, basis fiat: the amount in the session's currency")
    .option('--asset <ticker>', 'the asset of the payments to return (when the session received several)')
    .option('--network <slug>', 'the network of the payments to return (when the session received on several)')
    .option('--destination <address>', 'send to this address; without it, Kassa makes a claim link for the payer')
    .option('--claim-expires-in-minutes <n>', 'the claim link’s life (5–43200, default 10080)')
    .option('--note <text>', 'your own note (at most 500 characters)')
    .option('--idempotency-key <key>', 'as the REST Idempotency-Key: a repeat with it makes no second refund')
    .option('--json', 'print one JSON object')
    .action(async (options: CreateOptions) => {
      const session = checkId(options.session, 'Checkout session');
      const parsed = parseCreateRefund(createBody(options));
      if (!parsed.ok) throw invalid(parsed.problems);
      const output = await withRuntime(async (ctx) => {
        const result = await createRefund(ctx, options.org, session, parsed.value, options.idempotencyKey);
        return show(options.json, result.refund, ctx.checkoutBaseUrl);
      });
      print(output);
    });

  refunds
    .command('list')
    .description("list a session's refunds, oldest first")
    .requiredOption('--org <id>', 'organisation id')
    .requiredOption('--session <id>', 'checkout session id')
    .option('--json', 'print a JSON array')
    .action(async (options: { org: string; session: string; json?: boolean }) => {
      const session = checkId(options.session, 'Checkout session');
      const output = await withRuntime(async (ctx) =>
        (await listSessionRefunds(ctx, options.org, session)).map((refund) =>
          show(options.json, refund, ctx.checkoutBaseUrl),
        ),
      );
      if (options.json) printJson(output);
      else output.forEach((line) => printLine(line as string));
    });

  refunds
    .command('show')
    .description('show one refund')
    .argument('<id>', 'refund id')
    .requiredOption('--org <id>', 'organisation id')
    .option('--json', 'print one JSON object')
    .action(async (id: string, options: { org: string; json?: boolean }) => {
      const output = await withRuntime(async (ctx) =>
        show(options.json, await getRefund(ctx, options.org, checkId(id, 'Refund')), ctx.checkoutBaseUrl),
      );
      print(output);
    });

  refunds
    .command('cancel')
    .description('cancel a refund not yet sent (awaiting_destination or ready)')
    .argument('<id>', 'refund id')
    .requiredOption('--org <id>', 'organisation id')
    .option('--json', 'print one JSON object')
    .action(async (id: string, options: { org: string; json?: boolean }) => {
      const output = await withRuntime(async (ctx) =>
        show(options.json, await cancelRefund(ctx, options.org, checkId(id, 'Refund')), ctx.checkoutBaseUrl),
      );
      print(output);
    });

  for (const extend of extensions) extend(refunds);
  return refunds;
}
