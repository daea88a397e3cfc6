import { Router, type Request } from 'express';
import type { DomainContext } from '../domain/context.js';
import {
  createRefundFromDashboard,
  refundsOfSessionForDashboard,
  refundTransferForDashboard,
  reportRefundSentFromDashboard,
} from '../domain/dashboard/refund-sending.js';
import type { CreateRefundInput } from '../domain/refunds/create-refund.js';
import { REFUND_BASES, REFUND_KINDS, type Refund } from '../domain/refunds/refund.js';
import { toRefundView } from '../domain/refunds/refund.views.js';
import { invalid } from '../domain/shared/errors.js';
import { Decimal } from '../domain/shared/money.js';
import { isUuid } from '../domain/shared/uuid.js';
import { clientAddressOf } from '../http/client-address.js';
import {
  principalOf,
  requireCsrfToken,
  requireSameOrigin,
  type DashboardCookieOptions,
} from '../http/dashboard-session.js';
import { methodNotAllowed } from '../http/error-handler.js';
import { readJsonBody } from '../http/json-body.js';
import { WEB_DIR } from './hosted-page.js';

/**
 * The dashboard's refund button (docs/refund-claims.md#the-dashboard): its script, the session's refunds, create, the
 * transfer Kassa builds for the merchant's browser wallet and the hash it reports. Changes pass origin and CSRF checks.
 */

const AMOUNT = /^\d{1,30}(\.\d{1,18})?$/;

function uuidParam(req: Request, name: string): string {
  const value = req.params[name] as string;
  if (!isUuid(value)) throw invalid([`${name} must be a UUID`]);
  return value.toLowerCase();
}

/** The form's fields, checked as strictly as the REST create (whose rules the use-case applies again). */
function parseForm(body: unknown): CreateRefundInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid(['body must be a JSON object']);
  const form = body as Record<string, unknown>;
  const problems: string[] = [];
  const text = (name: string) => (typeof form[name] === 'string' && form[name] !== '' ? (form[name] as string) : null);
  const kind = text('kind');
  const basis = text('basis') ?? 'token';
  const amount = text('amount');
  const destination = text('destination');
  if (!kind || !(REFUND_KINDS as readonly string[]).includes(kind))
    problems.push(`kind must be one of ${REFUND_KINDS.join(', ')}`);
  if (!(REFUND_BASES as readonly string[]).includes(basis))
    problems.push(`basis must be one of ${REFUND_BASES.join(', ')}`);
  if (amount !== null && !AMOUNT.test(amount)) problems.push('amount must be a decimal number');
  if (kind === 'part' && amount === null) problems.push('amount must be given for a part refund');
  if (problems.length > 0) throw invalid(problems);
  const value = amount === null ? undefined : new Decimal(amount);
  return {
    kind: kind as CreateRefundInput['kind'],
    basis: basis as CreateRefundInput['basis'],
    ...(kind === 'part' ? (basis === 'fiat' ? { amountFiat: value } : { amount: value }) : {}),
    ...(destination !== null ? { destination } : {}),
  };
}

export function dashboardRefundsRouter(ctx: DomainContext, options: DashboardCookieOptions): Router {
  const router = Router();
  const base = '/dashboard/api/organisations/:organisationId';
  const view = (refund: Refund) => toRefundView(refund, ctx.checkoutBaseUrl);
  const change = async (req: Request) => {
    requireSameOrigin(req, ctx.checkoutBaseUrl);
    const principal = await principalOf(ctx, req, options);
    requireCsrfToken(req, principal, {});
    return { principal, organisationId: uuidParam(req, 'organisationId'), address: clientAddressOf(req) };
  };

  router.get('/dashboard/assets/refunds.js', (_req, res) => {
    res.type('text/javascript').set('Cache-Control', 'no-cache').sendFile(`${WEB_DIR}dashboard/refunds.js`);
  });

  router.get(`${base}/sessions/:sessionId/refunds`, async (req, res) => {
    const principal = await principalOf(ctx, req, options);
    const org = uuidParam(req, 'organisationId');
    const refunds = await refundsOfSessionForDashboard(ctx, principal, org, uuidParam(req, 'sessionId'));
    res.json({ data: refunds.map(view) });
  });
  router.post(`${base}/sessions/:sessionId/refunds`, async (req, res) => {
    const by = await change(req);
    const input = parseForm(readJsonBody(req));
    res.status(201).json(view(await createRefundFromDashboard(ctx, by, uuidParam(req, 'sessionId'), input)));
  });
  router.all(`${base}/sessions/:sessionId/refunds`, methodNotAllowed(['GET', 'POST']));

  router.get(`${base}/refunds/:refundId/transfer`, async (req, res) => {
    const principal = await principalOf(ctx, req, options);
    const org = uuidParam(req, 'organisationId');
    const found = await refundTransferForDashboard(ctx, principal, org, uuidParam(req, 'refundId'));
    const { transaction } = found;
    res.json({
      refund: view(found.refund),
      uri: found.uri,
      transaction: {
        chain_id: `0x${transaction.chainId.toString(16)}`,
        to: transaction.to,
        data: transaction.data,
        value: `0x${BigInt(transaction.value).toString(16)}`,
      },
    });
  });
  router.all(`${base}/refunds/:refundId/transfer`, methodNotAllowed(['GET']));

  router.post(`${base}/refunds/:refundId/sent`, async (req, res) => {
    const by = await change(req);
    const body = readJsonBody(req) as Record<string, unknown> | null;
    const txHash = body?.tx_hash;
    const from = body?.from ?? null;
    const problems: string[] = [];
    if (typeof txHash !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(txHash))
      problems.push('tx_hash must be a transaction hash (0x and 64 hex digits)');
    if (from !== null && (typeof from !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(from)))
      problems.push('from must be an address');
    if (problems.length > 0) throw invalid(problems);
    const refund = await reportRefundSentFromDashboard(ctx, by, uuidParam(req, 'refundId'), {
      txHash: txHash as string,
      from: from as string | null,
    });
    res.json(view(refund));
  });
  router.all(`${base}/refunds/:refundId/sent`, methodNotAllowed(['POST']));
  return router;
}
