// Generated from Kassa's OpenAPI document (GET /openapi.json) by `npm run client:types`
// (src/rest/client-types.ts). Do not edit: change the zod schemas in src/ and run it again.

export interface Error {
  statusCode: number;
  /** An array of every problem for 400; one sentence otherwise. */
  message: string | string[];
  error: string;
  /** The stable reason code a client branches on (docs/api/rest.md#error-codes); messages may change. */
  code?: 
    | 'validation_failed'
    | 'not_found'
    | 'conflict'
    | 'unprocessable'
    | 'unauthenticated'
    | 'forbidden'
    | 'unavailable'
    | 'rate_limited'
    | 'gone'
    | 'method_not_allowed'
    | 'body_too_large'
    | 'unsupported_media_type'
    | 'internal_error'
    | 'signature_missing'
    | 'key_unknown'
    | 'key_revoked'
    | 'key_expired'
    | 'timestamp_invalid'
    | 'timestamp_stale'
    | 'signature_invalid'
    | 'signature_replayed'
    | 'idempotency_conflict'
    | 'amounts_exhausted'
    | 'organisation_deleted'
    | 'no_wallet'
    | 'rates_unavailable'
    | 'link_inactive'
    | 'link_expired'
    | 'link_used_up'
    | 'session_closed'
    | 'currency_mismatch'
    | 'chain_mismatch'
    | 'payer_mismatch'
    | 'too_many_unverified'
    | 'tx_already_bound'
    | 'tx_paid_elsewhere'
    | 'tx_contested'
    | 'not_mined'
    | 'wrong_chain'
    | 'dropped'
    | 'reverted'
    | 'tx_mined_before_session'
    | 'wrong_asset'
    | 'wrong_sender'
    | 'wrong_recipient'
    | 'no_payment'
    | 'bind_too_small'
    | 'tx_already_credited'
    | 'superseded'
    | 'refund_exceeds_received'
    | 'session_not_refundable'
    | 'not_overpaid'
    | 'refund_not_cancellable'
    | 'refund_state'
    | 'destination_refused'
    | 'claim_used'
    | 'claim_expired';
}

export type CheckoutStatus = 'pending' | 'waiting_payment' | 'partial' | 'paid' | 'expired' | 'failed';

/** A crypto ticker Kassa quotes and binds. */
export type CryptoTicker = 'BTC' | 'ETH' | 'USDT' | 'USDC' | 'BNB' | 'SOL';

/** One quoted asset (docs/api/rest.md#crypto-options). */
export interface CryptoPaymentOption {
  ticker: CryptoTicker;
  /** Asset identifier, e.g. "ethereum". */
  id: string;
  /** Price of 1 unit in the session quote currency. */
  unit_price_fiat: string;
  /** What the payer must send. */
  amount: string;
}

export interface CheckoutUser {
  id: string;
  email: string | null;
  telegram_id: string | null;
  username: string | null;
}

export interface LineItem {
  name: string;
  quantity: number;
  /** In the quote currency. */
  unit_price: string;
  total_price: string;
  product_id: string | null;
}

/** The public view, exactly these fields (docs/api/rest.md#the-public-view). */
export interface PublicSession {
  session_id: string;
  status: CheckoutStatus;
  /** Origin of the session. */
  source: string;
  from_payment_link: boolean;
  anonymous: boolean;
  requires_payer_identity: boolean;
  identity_options: string[];
  product_payment_link_id: string | null;
  total_amount_crypto: string | null;
  /** Ticker of the selected crypto. */
  crypto_currency: CryptoTicker | null;
  crypto_options: CryptoPaymentOption[];
  fiat_currency: string;
  total_amount_fiat: string;
  /** Merchant receiving wallet. */
  wallet_address: string;
  supported_networks: string[];
  expires_at: string;
  overpaid: boolean;
  bound_tx_hash: string | null;
  payer_wallet_address: string | null;
  /** Decimal EIP-155 id. */
  chain_id: string | null;
  user: CheckoutUser;
}

/** The merchant view: every field of the public view plus the merchant fields (docs/api/rest.md#the-merchant-view). */
export interface MerchantSession {
  session_id: string;
  status: CheckoutStatus;
  /** Origin of the session. */
  source: string;
  from_payment_link: boolean;
  anonymous: boolean;
  requires_payer_identity: boolean;
  identity_options: string[];
  product_payment_link_id: string | null;
  total_amount_crypto: string | null;
  /** Ticker of the selected crypto. */
  crypto_currency: CryptoTicker | null;
  crypto_options: CryptoPaymentOption[];
  fiat_currency: string;
  total_amount_fiat: string;
  /** Merchant receiving wallet. */
  wallet_address: string;
  supported_networks: string[];
  expires_at: string;
  overpaid: boolean;
  bound_tx_hash: string | null;
  payer_wallet_address: string | null;
  /** Decimal EIP-155 id. */
  chain_id: string | null;
  user: CheckoutUser;
  organisation_id: string;
  organisation_name: string | null;
  organisation_deleted: boolean;
  owner_user_id: string | null;
  /** {checkout_base_url}/pay/<session_id>: send the payer here. */
  checkout_url: string;
  items: LineItem[];
  /** Free-form, as sent on create. */
  metadata: Record<string, unknown>;
  created_at: string;
}

/** The public view of a session started from a payment link, and where to pay it. */
export interface LinkSession {
  session_id: string;
  status: CheckoutStatus;
  /** Origin of the session. */
  source: string;
  from_payment_link: boolean;
  anonymous: boolean;
  requires_payer_identity: boolean;
  identity_options: string[];
  product_payment_link_id: string | null;
  total_amount_crypto: string | null;
  /** Ticker of the selected crypto. */
  crypto_currency: CryptoTicker | null;
  crypto_options: CryptoPaymentOption[];
  fiat_currency: string;
  total_amount_fiat: string;
  /** Merchant receiving wallet. */
  wallet_address: string;
  supported_networks: string[];
  expires_at: string;
  overpaid: boolean;
  bound_tx_hash: string | null;
  payer_wallet_address: string | null;
  /** Decimal EIP-155 id. */
  chain_id: string | null;
  user: CheckoutUser;
  /** {checkout_base_url}/pay/<session_id>: send the payer here. */
  checkout_url: string;
}

/** The answer to a bind (docs/api/rest.md#bind-rules). */
export interface BindResponse {
  session_id: string;
  bound_tx_hash: string;
  crypto_currency: CryptoTicker;
  total_amount_crypto: string;
  status: CheckoutStatus;
  /** true when this transaction was bound before. */
  idempotent: boolean;
}

/** The type of an event (docs/api/webhooks.md). */
export type EventType =
  | 'checkout_session.created'
  | 'checkout_session.tx_bound'
  | 'checkout_session.partially_paid'
  | 'checkout_session.paid'
  | 'checkout_session.expired'
  | 'checkout_session.failed'
  | 'checkout_session.late_payment'
  | 'checkout_session.payment_reversed'
  | 'checkout_session.quote_updated'
  | 'refund.created'
  | 'refund.destination_submitted'
  | 'refund.sent'
  | 'refund.confirmed'
  | 'refund.failed'
  | 'refund.cancelled'
  | 'refund.expired'
  | 'funds.collected';

/** The envelope of webhooks and of the feed. */
export type Event = {
  /** Also sent as X-Service-Event-Id; deduplicate on it. */
  id: string;
  /** The type of a session event (docs/api/webhooks.md). */
  type: 
    | 'checkout_session.created'
    | 'checkout_session.tx_bound'
    | 'checkout_session.partially_paid'
    | 'checkout_session.paid'
    | 'checkout_session.expired'
    | 'checkout_session.failed'
    | 'checkout_session.late_payment'
    | 'checkout_session.payment_reversed'
    | 'checkout_session.quote_updated';
  created_at: string;
  /** The merchant view of the session when the event happened. */
  data: MerchantSession;
} | {
  /** Also sent as X-Service-Event-Id; deduplicate on it. */
  id: string;
  /** The type of a refund event (docs/api/refunds.md#events). */
  type: 
    | 'refund.created'
    | 'refund.destination_submitted'
    | 'refund.sent'
    | 'refund.confirmed'
    | 'refund.failed'
    | 'refund.cancelled'
    | 'refund.expired';
  created_at: string;
  /** The refund when the event happened. */
  data: Refund;
} | {
  /** Also sent as X-Service-Event-Id; deduplicate on it. */
  id: string;
  type: 'funds.collected';
  created_at: string;
  /** Money a collect transaction moved from deposit addresses to the organisation wallet. */
  data: {
    collection_id: string;
    organisation_id: string;
    network: string;
    chain_id: string;
    /** The organisation's wallet the money went to. */
    destination: string;
    tx_hash: string;
    block_number: string;
    gas_used: string;
    /** The block's time. */
    collected_at: string;
    /** Per session and asset. */
    collected: Array<{
      session_id: string;
      deposit_address: string;
      crypto_currency: string;
      /** Null for the native coin. */
      token_address: string | null;
      /** Rounded down to 8 fractional digits; base_units is exact. */
      amount: string;
      /** The exact amount in the asset's smallest unit. */
      base_units: string;
    }>;
  };
};

export interface EventPage {
  data: Event[];
  /** Pass as `after` for the next page. */
  next_cursor: string | null;
  has_more: boolean;
}

export interface WebhookEndpoint {
  id: string;
  organisation_id: string;
  url: string;
  /** Empty = every type. */
  events: Array<
    | 'checkout_session.created'
    | 'checkout_session.tx_bound'
    | 'checkout_session.partially_paid'
    | 'checkout_session.paid'
    | 'checkout_session.expired'
    | 'checkout_session.failed'
    | 'checkout_session.late_payment'
    | 'checkout_session.payment_reversed'
    | 'checkout_session.quote_updated'
    | 'refund.created'
    | 'refund.destination_submitted'
    | 'refund.sent'
    | 'refund.confirmed'
    | 'refund.failed'
    | 'refund.cancelled'
    | 'refund.expired'
    | 'funds.collected'
  >;
  enabled: boolean;
  /** While set, deliveries carry a second signature made with the previous secret. */
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/** The endpoint and its signing secret (create and rotate-secret only). */
export interface WebhookEndpointWithSecret {
  id: string;
  organisation_id: string;
  url: string;
  /** Empty = every type. */
  events: Array<
    | 'checkout_session.created'
    | 'checkout_session.tx_bound'
    | 'checkout_session.partially_paid'
    | 'checkout_session.paid'
    | 'checkout_session.expired'
    | 'checkout_session.failed'
    | 'checkout_session.late_payment'
    | 'checkout_session.payment_reversed'
    | 'checkout_session.quote_updated'
    | 'refund.created'
    | 'refund.destination_submitted'
    | 'refund.sent'
    | 'refund.confirmed'
    | 'refund.failed'
    | 'refund.cancelled'
    | 'refund.expired'
    | 'funds.collected'
  >;
  enabled: boolean;
  /** While set, deliveries carry a second signature made with the previous secret. */
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
  /** Shown only in this answer. */
  secret: string;
}

export interface WebhookEndpointList {
  data: WebhookEndpoint[];
}

/** A payment link as its merchant sees it (docs/hosted-pages.md#payment-links). */
export interface PaymentLink {
  payment_link_id: string;
  organisation_id: string;
  /** {checkout_base_url}/l/<payment_link_id>. */
  url: string;
  name: string;
  currency: string;
  /** The fixed basket; null for an open amount. */
  items: LineItem[] | null;
  /** The open amount; null for a fixed basket. */
  amount_fiat: {
    min: string;
    max: string;
  } | null;
  total_amount_fiat: string | null;
  expires_in_minutes: number;
  identity_options: Array<'email' | 'telegram' | 'username'>;
  anonymous: boolean;
  requires_payer_identity: boolean;
  max_uses: number | null;
  /** Sessions of the link paid or still open (an open one holds its use until it expires). */
  uses: number;
  active: boolean;
  state: 'active' | 'inactive' | 'expired' | 'used_up';
  expires_at: string | null;
  /** Free-form. */
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export interface PaymentLinkList {
  data: PaymentLink[];
}

export interface Refund {
  id: string;
  session_id: string;
  organisation_id: string;
  /** full: all received; excess: the overpaid part; part: an amount given. */
  kind: 'full' | 'excess' | 'part';
  /** token: the amount was given in the asset; fiat: converted at the rate. */
  basis: 'token' | 'fiat';
  status: 
    | 'awaiting_destination'
    | 'ready'
    | 'sent'
    | 'confirmed'
    | 'cancelled'
    | 'expired'
    | 'failed';
  network: string;
  chain_id: string;
  /** The asset the money came in and goes back in. */
  crypto_currency: string;
  /** Null for the native coin. */
  token_address: string | null;
  /** What is sent back, in crypto_currency. */
  amount: string;
  /** The same in the asset's smallest unit: what the transfer carries. */
  base_units: string;
  /** Fiat basis only. */
  fiat_currency: string | null;
  /** Fiat basis only: the amount asked in fiat_currency. */
  amount_fiat: string | null;
  /** Fiat basis only: the rate it was converted at. */
  unit_price_fiat: string | null;
  rate_source: string | null;
  rated_at: string | null;
  /** Lower-case; null while awaiting_destination. */
  destination: string | null;
  /** Who gave the destination. */
  destination_source: 'merchant' | 'claim' | 'claim_signed' | null;
  destination_submitted_at: string | null;
  /** claim_signed: the paying wallet that signed the destination. */
  proof_address: string | null;
  /** The payer claim page; null when the merchant gave the destination. */
  claim_url: string | null;
  claim_expires_at: string | null;
  tx_hash: string | null;
  sent_at: string | null;
  block_number: string | null;
  confirmations: number;
  confirmed_at: string | null;
  failure_reason: string | null;
  note: string | null;
  created_at: string;
  updated_at: string;
}

export interface RefundList {
  data: Refund[];
}

export interface CreateCheckoutRequest {
  user: {
    id: string;
    email: string;
    username?: string;
  };
  items: Array<{
    name: string;
    quantity: number;
    /** In the request currency; at most 8 decimal places. */
    unit_price: number;
    product_id?: string;
  }>;
  /** Quote currency (ISO 4217), e.g. "USD"; crypto amounts derive from the total in it. */
  currency: string;
  /** Free-form JSON: at most 50 keys, 8 KB as JSON. */
  metadata?: Record<string, unknown>;
  /** Session lifetime in minutes. Default: 60. */
  expires_in_minutes?: number;
}

export interface BindTransactionRequest {
  tx_hash: string;
  /** Decimal EIP-155 id ("56"); hex "0x38" is accepted. */
  chain_id: string;
  /** Required unless the session already has one. */
  crypto_currency?: 'BTC' | 'ETH' | 'USDT' | 'USDC' | 'BNB' | 'SOL';
  payer_wallet_address?: string;
}

export interface CreateWebhookEndpointRequest {
  /** Where events are POSTed: http(s), no credentials; must resolve to a public address in production. */
  url: string;
  /** Event types to deliver; omitted or empty = every type. */
  events?: Array<
    | 'checkout_session.created'
    | 'checkout_session.tx_bound'
    | 'checkout_session.partially_paid'
    | 'checkout_session.paid'
    | 'checkout_session.expired'
    | 'checkout_session.failed'
    | 'checkout_session.late_payment'
    | 'checkout_session.payment_reversed'
    | 'checkout_session.quote_updated'
    | 'refund.created'
    | 'refund.destination_submitted'
    | 'refund.sent'
    | 'refund.confirmed'
    | 'refund.failed'
    | 'refund.cancelled'
    | 'refund.expired'
    | 'funds.collected'
  >;
  /** Default true. */
  enabled?: boolean;
}

export interface UpdateWebhookEndpointRequest {
  url?: string;
  events?: Array<
    | 'checkout_session.created'
    | 'checkout_session.tx_bound'
    | 'checkout_session.partially_paid'
    | 'checkout_session.paid'
    | 'checkout_session.expired'
    | 'checkout_session.failed'
    | 'checkout_session.late_payment'
    | 'checkout_session.payment_reversed'
    | 'checkout_session.quote_updated'
    | 'refund.created'
    | 'refund.destination_submitted'
    | 'refund.sent'
    | 'refund.confirmed'
    | 'refund.failed'
    | 'refund.cancelled'
    | 'refund.expired'
    | 'funds.collected'
  >;
  enabled?: boolean;
}

export interface CreatePaymentLinkRequest {
  /** Shown to payers at the top of the link page; the line name of an open amount. */
  name: string;
  /** A fixed basket, as in create (docs/api/rest.md#create-rules-and-limits). Exactly one of items and amount_fiat. */
  items?: Array<{
    name: string;
    quantity: number;
    /** In the request currency; at most 8 decimal places. */
    unit_price: number;
    product_id?: string;
  }>;
  /** An open amount: the payer chooses from min to max (JSON numbers, > 0, at most 8 decimals). */
  amount_fiat?: {
    min: number;
    max: number;
  };
  /** Quote currency (ISO 4217), e.g. "USD"; crypto amounts derive from the total in it. */
  currency: string;
  /** Lifetime of each session created from the link: 5 to 10080, default 60. */
  expires_in_minutes?: number;
  /** What the payer is asked for: any of email, telegram, username (at least one of them must be given). */
  identity_options?: Array<'email' | 'telegram' | 'username'>;
  /** Ask for no identity. Default: true when identity_options is empty. */
  anonymous?: boolean;
  /** How many sessions the link may create; null or omitted: no limit. */
  max_uses?: null | number;
  /** Default true. */
  active?: boolean;
  /** When the link stops taking payers; null or omitted: never. */
  expires_at?: null | string;
  /** Copied into every session of the link (merchant view, events). */
  metadata?: Record<string, unknown>;
}

export interface UpdatePaymentLinkRequest {
  name?: string;
  active?: boolean;
  max_uses?: null | number;
  expires_at?: null | string;
  /** Free-form JSON: at most 50 keys, 8 KB as JSON. */
  metadata?: Record<string, unknown>;
}

export interface LinkSessionRequest {
  /** When the link asks for email. */
  email?: string;
  /** When the link asks for telegram: @username or a numeric user id. */
  telegram?: string;
  /** When the link asks for username. */
  username?: string;
  /** Open-amount links only: the amount in the link currency, at most 8 decimals (a string or a JSON number). */
  amount?: string | number;
}

export interface CreateRefundRequest {
  /** full: all received; excess: the overpaid part; part: the amount given. */
  kind: 'full' | 'excess' | 'part';
  /** token (default) or fiat: amount_fiat in the session's currency, converted at the rate of the moment. */
  basis?: 'token' | 'fiat';
  /** kind part, basis token: the amount in the asset. */
  amount?: string | number;
  /** kind part, basis fiat: the amount in the session's currency. */
  amount_fiat?: string | number;
  /** The asset of the payments to return; may be left out when the session received in one. */
  crypto_currency?: 'BTC' | 'ETH' | 'USDT' | 'USDC' | 'BNB' | 'SOL';
  /** The network of the payments to return; may be left out when the session received on one. */
  network?: string;
  /** Given: the refund is ready. Left out: a claim link for the payer. */
  destination?: string;
  /** The claim link's life, 5 to 43200; default 10080 (7 days). */
  claim_expires_in_minutes?: number;
  /** The merchant's own note. */
  note?: string;
}
