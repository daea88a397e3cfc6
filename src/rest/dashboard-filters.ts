import type { Request } from 'express';
import { isAssetTicker } from '../domain/shared/assets.js';
import { CHECKOUT_SESSION_STATUSES, type CheckoutSessionStatus } from '../domain/sessions/checkout-session.js';
import type { SessionFilter } from '../domain/dashboard/session-list.js';
import { invalid } from '../domain/shared/errors.js';
import { Decimal } from '../domain/shared/money.js';

/**
 * The sessions list's filters as the dashboard keeps them in the URL (docs/dashboard.md#the-pages); empty values are no
 * filter. web/dashboard/sessions.js reads the same names.
 */
export const FILTER_PARAMS = [
  'status',
  'asset',
  'network',
  'from',
  'to',
  'currency',
  'min',
  'max',
  'payer',
  'tx',
  'link',
  'wallet',
  'meta',
];

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DECIMAL = /^\d{1,30}(\.\d{1,8})?$/;

function values(req: Request, name: string): string[] {
  const raw = req.query[name];
  const list = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  return list.filter((value): value is string => typeof value === 'string' && value.trim() !== '').map((v) => v.trim());
}

export function filterFromQuery(req: Request): SessionFilter {
  const one = (name: string) => values(req, name)[0];
  const problems: string[] = [];
  const statuses = values(req, 'status');
  for (const status of statuses)
    if (!(CHECKOUT_SESSION_STATUSES as readonly string[]).includes(status)) problems.push(`Unknown status ${status}`);
  const asset = one('asset');
  if (asset !== undefined && !isAssetTicker(asset)) problems.push(`Unknown asset ${asset}`);
  const day = (name: string, plusDays: number) => {
    const value = one(name);
    if (value === undefined) return undefined;
    if (!DAY.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
      problems.push(`${name} must be a day, YYYY-MM-DD`);
      return undefined;
    }
    return new Date(Date.parse(`${value}T00:00:00Z`) + plusDays * 86_400_000);
  };
  const amount = (name: string) => {
    const value = one(name);
    if (value === undefined) return undefined;
    if (!DECIMAL.test(value)) {
      problems.push(`${name} must be an amount such as 12.50`);
      return undefined;
    }
    return new Decimal(value);
  };
  const filter: SessionFilter = {
    ...(statuses.length ? { statuses: statuses as CheckoutSessionStatus[] } : {}),
    ...(asset && isAssetTicker(asset) ? { asset } : {}),
    ...(one('network') ? { network: one('network') } : {}),
    createdFrom: day('from', 0),
    createdBefore: day('to', 1),
    fiatCurrency: one('currency'),
    fiatMin: amount('min'),
    fiatMax: amount('max'),
    payer: one('payer'),
    txHash: one('tx'),
    paymentLinkId: one('link'),
    payerWallet: one('wallet'),
    metadata: one('meta'),
  };
  if (problems.length > 0) throw invalid(problems);
  return Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== undefined)) as SessionFilter;
}
