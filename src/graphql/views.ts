import type { BindResult as DomainBindResult } from '../domain/payments/bind-transaction.js';
import type { CheckoutSession as DomainSession } from '../domain/sessions/checkout-session.js';
import { toBindResponse, toPublicView, type PublicSessionView } from '../domain/sessions/checkout-session.views.js';
import { secondsUntilExpiry } from '../domain/sessions/checkout-page.js';
import { Decimal, formatAmount } from '../domain/shared/money.js';
import { amountDue, pendingCoversDue } from '../domain/sessions/session-amounts.js';
import { optionField, paymentChoices, type PaymentChoice } from '../domain/payments/payment-instructions.js';
import type { DomainContext } from '../domain/context.js';
import type { BindResult } from './bind-transaction.types.js';
import type { BoundTransaction as DomainBoundTransaction } from '../domain/payments/chain-ports.js';
import type {
  BoundTransaction,
  CheckoutSession,
  CheckoutSessionStatus,
  CryptoTicker,
  PaymentOption,
} from './checkout-session.types.js';

/**
 * What REST's public view writes (src/domain/sessions/checkout-session.views.ts) is taken from it, camelCased, so the
 * two APIs cannot disagree; the payer's identity is left out, as anyone with the session id can read this.
 */
export function toGraphqlSession(
  session: DomainSession,
  ctx: Pick<DomainContext, 'networks'>,
  now: Date,
): CheckoutSession {
  let view = graphqlViews.get(session);
  if (!view) graphqlViews.set(session, (view = timelessView(session, ctx)));
  return { ...view, secondsUntilExpiry: secondsUntilExpiry(session, now) };
}

/**
 * Everything but the time left, built once per session object: a session served from the
 * cache (src/db/read-cache.ts) is the same object until it changes.
 */
const graphqlViews = new WeakMap<DomainSession, TimelessView>();

type TimelessView = Omit<CheckoutSession, 'secondsUntilExpiry'>;

function timelessView(session: DomainSession, ctx: Pick<DomainContext, 'networks'>): TimelessView {
  const read = new SessionRead(session, ctx, new Date(0));
  const view = {} as Record<string, unknown>;
  for (const [name, field] of TIMELESS_FIELDS) view[name] = field(read);
  return view as unknown as TimelessView;
}

/**
 * What a view's fields are made from: one session read at `now`, with what several fields share (its public view,
 * its payment options) made once, when first asked.
 */
export class SessionRead {
  private publicView: PublicSessionView | undefined;
  private choices: PaymentChoice[] | undefined;

  constructor(
    readonly session: DomainSession,
    readonly ctx: Pick<DomainContext, 'networks'>,
    readonly now: Date,
  ) {}

  get view(): PublicSessionView {
    return (this.publicView ??= toPublicView(this.session));
  }

  get paymentChoices(): PaymentChoice[] {
    return (this.choices ??= paymentChoices(this.ctx, this.session));
  }
}

/** A view field's value made from its source on its own; `items`, when its value is a list of views of their own. */
export interface ViewField<S, T> {
  (source: S): T;
  readonly items?: { readonly sources: (source: S) => readonly unknown[]; readonly fields: ViewFields<unknown> };
}

/** A view's fields by GraphQL name, each made on its own, so a reader may make only those a query asks. */
export type ViewFields<S> = ReadonlyMap<string, ViewField<S, unknown>>;

/** A list field whose items are views made from `sources` by `fields`. */
function listOf<S, I>(sources: (source: S) => readonly I[], fields: ViewFields<I>): ViewField<S, unknown[]> {
  const field = (source: S) =>
    sources(source).map((item) => {
      const view: Record<string, unknown> = {};
      for (const [name, make] of fields) view[name] = make(item);
      return view;
    });
  return Object.assign(field, { items: { sources, fields: fields as ViewFields<unknown> } });
}

/** Each field's maker, typed against the view; a field the type has and this lacks does not compile. */
function viewFields<S, V>(fields: { readonly [K in keyof V]-?: ViewField<S, V[K]> }): ViewFields<S> {
  return new Map(Object.entries(fields) as Array<[string, ViewField<S, unknown>]>);
}

/** A payment option's base units, made once for its `baseUnits` and `uri` (a wallet's QR code holds both). */
const unitsOfChoice = new WeakMap<PaymentChoice, bigint>();

function unitsOf(choice: PaymentChoice): bigint {
  let units = unitsOfChoice.get(choice);
  if (units === undefined) unitsOfChoice.set(choice, (units = optionField.baseUnits(choice)));
  return units;
}

const PAYMENT_OPTION_FIELDS = viewFields<PaymentChoice, PaymentOption>({
  network: optionField.network,
  chainId: optionField.chainId,
  ticker: (choice) => optionField.ticker(choice) as CryptoTicker,
  native: optionField.native,
  contractAddress: optionField.contractAddress,
  decimals: optionField.decimals,
  walletAddress: optionField.walletAddress,
  amount: optionField.amount,
  baseUnits: (choice) => unitsOf(choice).toString(),
  uri: (choice) => optionField.uri(choice, unitsOf(choice)),
});

/** The session's own values are read from it; what REST's public view works out (options, wallet, times) from that. */
const TIMELESS_FIELDS = viewFields<SessionRead, TimelessView>({
  sessionId: ({ session }) => session.id,
  status: ({ session }) => session.status as CheckoutSessionStatus,
  source: ({ session }) => session.source,
  fromPaymentLink: ({ session }) => session.fromPaymentLink,
  anonymous: ({ session }) => session.anonymous,
  requiresPayerIdentity: ({ session }) => session.requiresPayerIdentity,
  identityOptions: (read) => read.view.identity_options,
  productPaymentLinkId: ({ session }) => session.productPaymentLinkId,
  totalAmountCrypto: ({ session }) => (session.totalAmountCrypto ? formatAmount(session.totalAmountCrypto) : null),
  cryptoCurrency: ({ session }) => session.cryptoCurrency as CryptoTicker | null,
  cryptoOptions: (read) =>
    read.view.crypto_options.map((option) => ({
      ticker: option.ticker as CryptoTicker,
      id: option.id,
      unitPriceFiat: option.unit_price_fiat,
      amount: option.amount,
    })),
  fiatCurrency: ({ session }) => session.fiatCurrency,
  totalAmountFiat: (read) => read.view.total_amount_fiat,
  walletAddress: (read) => read.view.wallet_address,
  supportedNetworks: (read) => read.view.supported_networks,
  expiresAt: (read) => read.view.expires_at,
  // Never claims more than arrived: the confirmed total rounds down, what is owed rounds up.
  amountReceived: ({ session }) => formatAmount(session.amountReceived.toDecimalPlaces(8, Decimal.ROUND_DOWN)),
  amountDue: ({ session }) =>
    session.totalAmountCrypto ? formatAmount(amountDue(session)!.toDecimalPlaces(8, Decimal.ROUND_CEIL)) : null,
  amountPending: ({ session }) => formatAmount(session.amountPending.toDecimalPlaces(8, Decimal.ROUND_DOWN)),
  paymentDetected: ({ session }) => session.amountPending.greaterThan(0),
  pendingCoversDue: ({ session }) => pendingCoversDue(session),
  paymentOptions: listOf((read: SessionRead) => read.paymentChoices, PAYMENT_OPTION_FIELDS) as ViewField<
    SessionRead,
    PaymentOption[]
  >,
  overpaid: ({ session }) => session.overpaid,
  boundTxHash: ({ session }) => session.boundTxHash,
  chainId: ({ session }) => session.chainId,
  items: ({ session }) =>
    session.items.map((item) => ({
      name: item.name,
      quantity: item.quantity,
      unitPrice: formatAmount(item.unitPrice),
      totalPrice: formatAmount(item.totalPrice),
    })),
  organisationId: ({ session }) => session.organisationId,
});

/**
 * Every field of `CheckoutSession`'s view, the time left at the read's `now` included: what toGraphqlSession answers,
 * made field by field (src/graphql/cold-queries.ts makes only those a query asks).
 */
export const SESSION_FIELDS: ViewFields<SessionRead> = new Map([
  ...TIMELESS_FIELDS,
  ['secondsUntilExpiry', (read: SessionRead) => secondsUntilExpiry(read.session, read.now)],
]);

/** A session's bound transactions as `CheckoutSession.transactions` answers them. */
export function toGraphqlTransactions(bound: readonly DomainBoundTransaction[]): BoundTransaction[] {
  return bound.map((t) => ({
    txHash: t.txHash,
    chainId: t.chainId,
    cryptoCurrency: t.cryptoCurrency as CryptoTicker,
    state: t.state.toUpperCase(),
    reason: t.reason,
    reasonCode: t.reasonCode,
  }));
}

/** The bind answer REST sends (docs/api/rest.md#bind-rules), in camelCase. */
export function toGraphqlBindResult(result: DomainBindResult): BindResult {
  const body = toBindResponse(result);
  return {
    sessionId: body.session_id,
    boundTxHash: body.bound_tx_hash,
    cryptoCurrency: body.crypto_currency as CryptoTicker,
    totalAmountCrypto: body.total_amount_crypto,
    status: body.status as CheckoutSessionStatus,
    idempotent: body.idempotent,
  };
}
