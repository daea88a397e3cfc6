import { Router, type Request, type Response } from 'express';
import type { DomainContext } from '../domain/context.js';
import { DomainError } from '../domain/shared/errors.js';
import { formatAmount } from '../domain/shared/money.js';
import { exportPayments, exportSessions, type PaymentExportRow } from '../domain/dashboard/session-list.js';
import type { SessionListRow } from '../domain/dashboard/session-list-ports.js';
import { roleIn, type Principal } from '../domain/dashboard/sign-in.js';
import { requirePermission } from '../domain/dashboard/roles.js';
import { filterFromQuery } from './dashboard-filters.js';
import { principalOf, type DashboardCookieOptions } from '../http/dashboard-session.js';
import { languageOf } from './dashboard-ui.js';
import { sessionPage, sessionsPage, webhooksPage } from './dashboard-ui-pages.js';
import { keysPage, linksPage, settingsPage } from './dashboard-ui-admin.js';
import { DASHBOARD_CSP } from './dashboard-pages.js';
import { dashboardDepositsRouter } from './dashboard-deposits.routes.js';

const CSV_COLUMNS = [
  'session_id',
  'created_at',
  'status',
  'fiat_currency',
  'total_amount_fiat',
  'crypto_currency',
  'total_amount_crypto',
  'amount_received',
  'payer_email',
  'payer_id',
  'payment_link_id',
  'bound_tx_hash',
  'expires_at',
];

/**
 * One CSV cell (RFC 4180): quoted when it holds a comma, quote or line break; a text a spreadsheet would run as a
 * formula (=, +, -, @, tab, CR first) gets a leading apostrophe.
 */
export function csvCell(value: string | null): string {
  if (value === null) return '';
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

function csvLine(row: SessionListRow): string {
  return `${[
    row.id,
    row.createdAt.toISOString(),
    row.status,
    row.fiatCurrency,
    formatAmount(row.totalAmountFiat),
    row.cryptoCurrency,
    row.totalAmountCrypto && formatAmount(row.totalAmountCrypto),
    row.amountReceived.toFixed(),
    row.payerEmail,
    row.payerId,
    row.paymentLinkId,
    row.boundTxHash,
    row.expiresAt.toISOString(),
  ]
    .map(csvCell)
    .join(',')}\r\n`;
}

const PAYMENT_CSV_COLUMNS = [
  'session_id',
  'block_time',
  'block_number',
  'tx_hash',
  'log_index',
  'network',
  'asset',
  'amount',
  'state',
  'fiat_currency',
  'rate',
  'fiat_value',
];

function paymentCsvLine(row: PaymentExportRow): string {
  return `${[
    row.sessionId,
    row.blockTime.toISOString(),
    row.blockNumber.toString(),
    row.txHash,
    String(row.logIndex),
    row.network,
    row.asset,
    row.amount.toFixed(),
    row.state,
    row.fiatCurrency,
    row.rate && formatAmount(row.rate),
    row.fiatValue && formatAmount(row.fiatValue),
  ]
    .map(csvCell)
    .join(',')}\r\n`;
}

/** Writes the rows as a CSV attachment as the client takes them; a failure midway cuts the download short. */
async function streamCsv<T>(
  req: Request,
  res: Response,
  filename: string,
  columns: readonly string[],
  rows: AsyncIterable<T>,
  line: (row: T) => string,
): Promise<void> {
  res.status(200).set({
    'Content-Type': 'text/csv; charset=utf-8',
    'Content-Disposition': `attachment; filename="${filename}"`,
  });
  res.write(`${columns.join(',')}\r\n`);
  try {
    for await (const row of rows) if (!res.write(line(row)) && !(await drained(res))) return;
  } catch (error) {
    // The status line is sent: a failure can only cut the download short, visibly (no final line break).
    req.log?.error({ err: error }, `${filename} export failed`);
    res.destroy();
    return;
  }
  res.end();
}

/** Waits until the response can take more, or the client went away (then false). */
function drained(res: Response): Promise<boolean> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve(!res.destroyed);
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

/** The dashboard's pages for sessions and the CSV export (docs/dashboard.md#the-pages, #csv-export). */
export function dashboardUiRouter(ctx: DomainContext, options: DashboardCookieOptions): Router {
  const router = Router();
  router.use(dashboardDepositsRouter(ctx, options));

  /** The signed-in member of `?org=` (or of their first organisation); a page for everyone else. */
  const member = async (req: Request, res: Response): Promise<{ principal: Principal; org: string } | null> => {
    let principal: Principal;
    try {
      principal = await principalOf(ctx, req, options);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'unauthorised') {
        res.redirect(303, '/dashboard/sign-in');
        return null;
      }
      throw error;
    }
    const org = typeof req.query.org === 'string' ? req.query.org : principal.memberships[0]?.organisationId;
    if (!org) throw new DomainError('not_found', 'You belong to no organisation');
    requirePermission(roleIn(principal, org), 'read');
    return { principal, org };
  };
  const page = (res: Response, html: string) =>
    res
      .status(200)
      .set({ 'Content-Security-Policy': DASHBOARD_CSP, 'X-Frame-Options': 'DENY', 'Referrer-Policy': 'same-origin' })
      .type('html')
      .send(html);

  router.get('/dashboard/sessions', async (req, res) => {
    const found = await member(req, res);
    if (!found) return;
    const networks = ctx.networks.map((network) => network.slug);
    page(res, sessionsPage(req, languageOf(req), found.principal, found.org, networks));
  });
  router.get('/dashboard/sessions/:id', async (req, res) => {
    const found = await member(req, res);
    if (!found) return;
    page(res, sessionPage(req, languageOf(req), found.principal, found.org, req.params.id));
  });

  router.get('/dashboard/webhooks', async (req, res) => {
    const found = await member(req, res);
    if (!found) return;
    page(res, webhooksPage(req, languageOf(req), found.principal, found.org));
  });

  for (const [path, render] of [
    ['/dashboard/links', linksPage],
    ['/dashboard/keys', keysPage],
    ['/dashboard/settings', settingsPage],
  ] as const)
    router.get(path, async (req, res) => {
      const found = await member(req, res);
      if (!found) return;
      page(res, render(req, languageOf(req), found.principal, found.org));
    });

  // Streamed in keyset batches: memory stays one batch whatever the number of rows.
  router.get('/dashboard/api/organisations/:organisationId/sessions.csv', async (req, res) => {
    const principal = await principalOf(ctx, req, options);
    const { organisationId } = req.params;
    const rows = await exportSessions(ctx, principal, organisationId, filterFromQuery(req));
    await streamCsv(req, res, `kassa-sessions-${organisationId}.csv`, CSV_COLUMNS, rows, csvLine);
  });
  // One row per payment of the filtered sessions, a batch of sessions at a time.
  router.get('/dashboard/api/organisations/:organisationId/payments.csv', async (req, res) => {
    const principal = await principalOf(ctx, req, options);
    const { organisationId } = req.params;
    const rows = await exportPayments(ctx, principal, organisationId, filterFromQuery(req));
    await streamCsv(req, res, `kassa-payments-${organisationId}.csv`, PAYMENT_CSV_COLUMNS, rows, paymentCsvLine);
  });
  return router;
}
