import type { DomainContext } from '../context.js';
import { invalid, notFound } from '../shared/errors.js';
import { isUuid } from '../shared/uuid.js';
import type { Decimal } from '../shared/money.js';
import type {
  SessionCursor,
  SessionFilter,
  SessionListRow,
  SessionPaymentRow,
  SessionStory,
} from './session-list-ports.js';

export type { SessionCursor, SessionFilter };
import { requirePermission } from './roles.js';
import { roleIn, type Principal } from './sign-in.js';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

export function encodeCursor(cursor: SessionCursor): string {
  return Buffer.from(`${cursor.createdAt.toISOString()}|${cursor.id}`).toString('base64url');
}

export function decodeCursor(text: string): SessionCursor {
  const [at, id] = Buffer.from(text, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(at ?? '');
  if (!id || !isUuid(id) || Number.isNaN(createdAt.getTime())) throw invalid('after is not a cursor this list gave');
  return { createdAt, id };
}

/** Checks and normalises a filter: lower-case hashes and wallets, a sane range. */
export function normaliseFilter(filter: SessionFilter, networks: readonly string[]): SessionFilter {
  const problems: string[] = [];
  const txHash = filter.txHash?.trim().toLowerCase();
  if (txHash !== undefined && !/^0x[0-9a-f]{64}$/.test(txHash)) problems.push('txHash must be 0x and 64 hex digits');
  if (filter.network !== undefined && !networks.includes(filter.network))
    problems.push(`network must be one of ${networks.join(', ')}`);
  if (filter.paymentLinkId !== undefined && !isUuid(filter.paymentLinkId)) problems.push('paymentLinkId is not a UUID');
  if (filter.createdFrom && filter.createdBefore && filter.createdFrom >= filter.createdBefore)
    problems.push('createdFrom must be before createdBefore');
  if (filter.fiatMin && filter.fiatMax && filter.fiatMin.gt(filter.fiatMax)) problems.push('fiatMin is above fiatMax');
  const fiatCurrency = filter.fiatCurrency?.trim().toUpperCase();
  if (fiatCurrency !== undefined && !/^[A-Z]{3}$/.test(fiatCurrency))
    problems.push('fiatCurrency must be an ISO 4217 code');
  const payer = filter.payer?.trim();
  if (payer !== undefined && (payer.length === 0 || payer.length > 255))
    problems.push('payer must be 1 to 255 characters');
  const payerWallet = filter.payerWallet?.trim().toLowerCase();
  if (payerWallet !== undefined && !/^0x[0-9a-f]{40}$/.test(payerWallet))
    problems.push('payerWallet must be 0x and 40 hex digits');
  const metadata = filter.metadata?.trim();
  if (metadata !== undefined && (metadata.length === 0 || metadata.length > 200))
    problems.push('metadata must be 1 to 200 characters');
  if (problems.length > 0) throw invalid(problems);
  return { ...filter, txHash, fiatCurrency, payer, payerWallet, metadata };
}

/**
 * A metadata filter `key=value` (a key of letters, digits, `_`, `-` or `.`) asks for that top-level pair exactly,
 * which an index answers; any other text is looked for anywhere in the metadata.
 */
export function metadataPair(text: string): { key: string; value: string } | null {
  const match = /^([A-Za-z0-9_.-]{1,100})=(.*)$/s.exec(text);
  return match ? { key: match[1]!, value: match[2]! } : null;
}

export interface SessionPage {
  readonly sessions: readonly SessionListRow[];
  /** Pass as `after` for the next page; null on the last. */
  readonly nextCursor: string | null;
}

/** One page of the organisation's sessions, newest first, filtered (role `read`). */
export async function listSessions(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  input: { filter?: SessionFilter; first?: number; after?: string },
): Promise<SessionPage> {
  requirePermission(roleIn(principal, organisationId), 'read');
  const first = input.first ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE_SIZE)
    throw invalid(`first must be from 1 to ${MAX_PAGE_SIZE}`);
  const filter = normaliseFilter(
    input.filter ?? {},
    ctx.networks.map((network) => network.slug),
  );
  const after = input.after ? decodeCursor(input.after) : null;
  const rows = await ctx.store.dashboard.sessions.list(organisationId, filter, first + 1, after, ctx.clock());
  const sessions = rows.slice(0, first);
  const last = sessions.at(-1);
  return { sessions, nextCursor: rows.length > first && last ? encodeCursor(last) : null };
}

/** One session of the organisation with its story (role `read`); another organisation's is not found. */
export async function readSessionStory(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  sessionId: string,
): Promise<SessionStory> {
  requirePermission(roleIn(principal, organisationId), 'read');
  const story = isUuid(sessionId)
    ? await ctx.store.dashboard.sessions.story(organisationId, sessionId, ctx.clock())
    : null;
  if (!story) throw notFound(`Checkout session ${sessionId} not found`);
  return story;
}

/**
 * Of sessions that changed, those of the organisation (role `read`): what a live list may be told of. The person is
 * authenticated again by the caller each time, so a disabled account hears nothing more.
 */
export async function changedSessionsOf(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  sessionIds: readonly string[],
): Promise<string[]> {
  requirePermission(roleIn(principal, organisationId), 'read');
  return ctx.store.dashboard.sessions.ofOrganisation(organisationId, sessionIds);
}

/** Sessions read per query by an export. */
export const EXPORT_BATCH = 500;

/**
 * Every session of the organisation matching the filter, newest first, read in keyset batches so an export of any
 * size holds one batch in memory (role `read`). Checks the role and the filter before the first row.
 */
export async function exportSessions(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  filter: SessionFilter,
): Promise<AsyncIterable<SessionListRow>> {
  requirePermission(roleIn(principal, organisationId), 'read');
  const checked = normaliseFilter(
    filter,
    ctx.networks.map((network) => network.slug),
  );
  const now = ctx.clock();
  return {
    async *[Symbol.asyncIterator]() {
      let after: SessionCursor | null = null;
      for (;;) {
        const rows = await ctx.store.dashboard.sessions.list(organisationId, checked, EXPORT_BATCH, after, now);
        yield* rows;
        if (rows.length < EXPORT_BATCH) return;
        after = rows.at(-1)!;
      }
    },
  };
}

/** A payment of the payments export: the row and its fiat value (amount × rate, 8 decimal places). */
export interface PaymentExportRow extends SessionPaymentRow {
  readonly fiatValue: Decimal | null;
}

/**
 * Every payment counted for the sessions matching the filter: sessions newest first, each session's payments in
 * chain order, read a batch of sessions at a time (role `read`; checked with the filter before the first row).
 */
export async function exportPayments(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  filter: SessionFilter,
): Promise<AsyncIterable<PaymentExportRow>> {
  const sessions = await exportSessions(ctx, principal, organisationId, filter);
  const paymentsOf = async (ids: string[]): Promise<PaymentExportRow[]> => {
    const order = new Map(ids.map((id, index) => [id, index]));
    const rows = await ctx.store.dashboard.sessions.payments(organisationId, ids);
    return rows
      .map((row, index) => ({ row, index }))
      .sort((a, b) => order.get(a.row.sessionId)! - order.get(b.row.sessionId)! || a.index - b.index)
      .map(({ row }) => ({ ...row, fiatValue: row.rate && row.amount.mul(row.rate).toDecimalPlaces(8) }));
  };
  return {
    async *[Symbol.asyncIterator]() {
      let batch: string[] = [];
      for await (const session of sessions) {
        batch.push(session.id);
        if (batch.length < EXPORT_BATCH) continue;
        yield* await paymentsOf(batch);
        batch = [];
      }
      if (batch.length > 0) yield* await paymentsOf(batch);
    },
  };
}
