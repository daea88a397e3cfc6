import type { Command } from 'commander';
import { invalid, notFound } from '../domain/shared/errors.js';
import { isUuid } from '../domain/shared/uuid.js';
import { Decimal } from '../domain/shared/money.js';
import type { PaymentLink } from '../domain/payment-links/payment-link.js';
import { toPaymentLinkView } from '../domain/payment-links/payment-link.views.js';
import {
  createPaymentLink,
  getPaymentLink,
  listPaymentLinks,
  updatePaymentLink,
} from '../domain/payment-links/payment-links.js';
import { parseCreatePaymentLink, parseUpdatePaymentLink } from '../rest/payment-links.schema.js';
import { printJson, printLine } from './output.js';
import { withRuntime } from './with-runtime.js';

interface CreateOptions {
  org: string;
  name: string;
  currency: string;
  item?: string[];
  amountMin?: string;
  amountMax?: string;
  identity?: string;
  anonymous?: boolean;
  maxUses?: string;
  expiresInMinutes?: string;
  expiresAt?: string;
  inactive?: boolean;
  json?: boolean;
}

// As elsewhere in the CLI, an id that is not a UUID is "not found" (exit 4).
function checkId(id: string): string {
  if (!isUuid(id)) throw notFound(`Payment link ${id} not found`);
  return id;
}
const invalidOrg = (id: string) => notFound(`Organisation ${id} not found`);

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** A number option as the REST body would carry it (an exact JSON number), or the text when it is not one. */
const number = (text: string) => (/^-?\d+(\.\d+)?$/.test(text.trim()) ? new Decimal(text.trim()) : text);

/** `--item "Coffee beans:2:12.50"`: the name may hold colons; quantity and unit price are the last two parts. */
function parseItem(text: string, index: number) {
  const parts = text.split(':');
  if (parts.length < 3) throw invalid([`--item ${index + 1} must be NAME:QUANTITY:UNIT_PRICE (got "${text}")`]);
  const price = parts.pop()!;
  const quantity = parts.pop()!;
  return { name: parts.join(':'), quantity: number(quantity), unit_price: number(price) };
}

/** The same body POST /payment-links takes, checked by the same schema, so the CLI and REST agree on every rule. */
function createBody(options: CreateOptions): unknown {
  const open = options.amountMin !== undefined || options.amountMax !== undefined;
  return {
    name: options.name,
    currency: options.currency,
    ...(options.item ? { items: options.item.map(parseItem) } : {}),
    ...(open ? { amount_fiat: { min: number(options.amountMin ?? ''), max: number(options.amountMax ?? '') } } : {}),
    ...(options.identity !== undefined
      ? {
          identity_options: options.identity
            .split(',')
            .map((kind) => kind.trim())
            .filter(Boolean),
        }
      : {}),
    ...(options.anonymous ? { anonymous: true } : {}),
    ...(options.maxUses !== undefined ? { max_uses: number(options.maxUses) } : {}),
    ...(options.expiresInMinutes !== undefined ? { expires_in_minutes: number(options.expiresInMinutes) } : {}),
    ...(options.expiresAt !== undefined ? { expires_at: options.expiresAt } : {}),
    ...(options.inactive ? { active: false } : {}),
  };
}

function describe(link: PaymentLink, url: string, state: string): string {
  const price =
    link.items.length > 0
      ? `${link.items.length} item(s)`
      : `${link.amountMin!.toFixed()}–${link.amountMax!.toFixed()}`;
  const uses = link.maxUses === null ? `${link.uses} uses` : `${link.uses}/${link.maxUses} uses`;
  return `${link.id}  ${state.padEnd(8)}  ${link.name}  ${price} ${link.currency}  ${uses}  ${url}`;
}

export function registerLinkCommands(program: Command): void {
  const links = program
    .command('links')
    .description("an organisation's payment links (docs/hosted-pages.md#payment-links)");

  const print =
    (json: boolean | undefined) => (link: PaymentLink, ctx: { checkoutBaseUrl: string; clock: () => Date }) => {
      const view = toPaymentLinkView(link, ctx.checkoutBaseUrl, ctx.clock());
      return json ? view : describe(link, view.url, view.state);
    };

  links
    .command('create')
    .description(
      'create a reusable payment link: a fixed basket (--item, repeatable) or an open amount ' +
        '(--amount-min/--amount-max)',
    )
    .requiredOption('--org <id>', 'organisation id')
    .requiredOption('--name <name>', 'shown to payers; the line name of an open amount')
    .requiredOption('--currency <code>', 'ISO 4217 quote currency')
    .option('--item <name:quantity:unit_price>', 'a line of the basket (repeat for several)', collect)
    .option('--amount-min <amount>', 'open amount: the least the payer may choose')
    .option('--amount-max <amount>', 'open amount: the most the payer may choose')
    .option('--identity <kinds>', 'what the payer is asked for: comma-separated email, telegram, username')
    .option('--anonymous', 'ask the payer for nothing (the default without --identity)')
    .option('--max-uses <n>', 'how many sessions of the link may be paid or open')
    .option('--expires-in-minutes <n>', 'lifetime of each session (5–10080, default 60)')
    .option('--expires-at <iso>', 'when the link stops taking payers (ISO 8601 with a time zone)')
    .option('--inactive', 'create it switched off')
    .option('--json', 'print one JSON object')
    .action(async (options: CreateOptions) => {
      const parsed = parseCreatePaymentLink(createBody(options));
      if (!parsed.ok) throw invalid(parsed.problems);
      const output = await withRuntime(async (ctx) =>
        print(options.json)(await createPaymentLink(ctx, options.org, parsed.value), ctx),
      );
      if (typeof output === 'string') printLine(output);
      else printJson(output);
    });

  links
    .command('list')
    .description("list an organisation's payment links, newest first")
    .requiredOption('--org <id>', 'organisation id')
    .option('--json', 'print a JSON array')
    .action(async (options: { org: string; json?: boolean }) => {
      const output = await withRuntime(async (ctx) => {
        if (!(await ctx.store.organisations.findById(options.org))) throw invalidOrg(options.org);
        return (await listPaymentLinks(ctx, options.org)).map((link) => print(options.json)(link, ctx));
      });
      if (options.json) printJson(output);
      else output.forEach((line) => printLine(line as string));
    });

  links
    .command('show')
    .description('show one payment link')
    .argument('<id>', 'payment link id')
    .requiredOption('--org <id>', 'organisation id')
    .option('--json', 'print one JSON object')
    .action(async (id: string, options: { org: string; json?: boolean }) => {
      const output = await withRuntime(async (ctx) =>
        print(options.json)(await getPaymentLink(ctx, options.org, checkId(id)), ctx),
      );
      if (typeof output === 'string') printLine(output);
      else printJson(output);
    });

  links
    .command('deactivate')
    .description('switch a payment link off: its page and new visits answer 410; sessions already made carry on')
    .argument('<id>', 'payment link id')
    .requiredOption('--org <id>', 'organisation id')
    .option('--json', 'print one JSON object')
    .action(async (id: string, options: { org: string; json?: boolean }) => {
      const output = await withRuntime(async (ctx) =>
        print(options.json)(await updatePaymentLink(ctx, options.org, checkId(id), { active: false }), ctx),
      );
      if (typeof output === 'string') printLine(output);
      else printJson(output);
    });

  links
    .command('update')
    .description('rename a payment link, change its use limit, or switch it on or off (as PATCH /payment-links/<id>)')
    .argument('<id>', 'payment link id')
    .requiredOption('--org <id>', 'organisation id')
    .option('--name <name>', 'the new name')
    .option('--max-uses <n>', 'how many sessions may be paid or open; "none" for no limit')
    .option('--active <yes|no>', 'switch it on or off')
    .option('--json', 'print one JSON object')
    .action(
      async (
        id: string,
        options: { org: string; name?: string; maxUses?: string; active?: string; json?: boolean },
      ) => {
        if (options.active !== undefined && !['yes', 'no'].includes(options.active))
          throw invalid('--active must be yes or no');
        const parsed = parseUpdatePaymentLink({
          ...(options.name !== undefined ? { name: options.name } : {}),
          ...(options.maxUses !== undefined
            ? { max_uses: options.maxUses === 'none' ? null : number(options.maxUses) }
            : {}),
          ...(options.active !== undefined ? { active: options.active === 'yes' } : {}),
        });
        if (!parsed.ok) throw invalid(parsed.problems);
        const output = await withRuntime(async (ctx) =>
          print(options.json)(await updatePaymentLink(ctx, options.org, checkId(id), parsed.value), ctx),
        );
        if (typeof output === 'string') printLine(output);
        else printJson(output);
      },
    );
}
