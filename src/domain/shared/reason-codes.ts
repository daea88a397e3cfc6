/**
 * The stable reason codes a client branches on: REST error bodies carry one as `code`, GraphQL errors as
 * `extensions.reason` (docs/api/rest.md#error-codes). Codes are never renamed; messages may change.
 */
export const REASON_CODES = {
  // Any refusal of its kind that has no more precise code.
  validation_failed: 'The request breaks a rule of its input; `message` lists every problem',
  not_found: 'The thing asked for does not exist',
  conflict: 'The request clashes with the current state',
  unprocessable: 'Well-formed, but the organisation cannot do it yet',
  unauthenticated: 'Missing or wrong credentials',
  forbidden: 'Signed in, but the role does not allow it',
  unavailable: 'A dependency cannot serve it right now; retry',
  rate_limited: 'Over a rate limit; retry after Retry-After seconds',
  gone: 'It existed but is no longer offered',
  // The HTTP layer, before any rule of Kassa's (REST only).
  method_not_allowed: 'The path does not serve this method (see the Allow header)',
  body_too_large: 'The request body is larger than the limit',
  unsupported_media_type: 'The body is not UTF-8 JSON with Content-Type application/json',
  internal_error: 'Something failed inside Kassa; it is logged',
  // Signed merchant routes (docs/api/rest.md#signing-a-merchant-call).
  signature_missing: 'X-Service-Key, X-Service-Timestamp or X-Service-Signature is missing',
  key_unknown: 'X-Service-Key is not a known key',
  key_revoked: 'The API key has been revoked',
  key_expired: 'The API key has expired (it was rotated)',
  timestamp_invalid: 'X-Service-Timestamp is not a Unix timestamp in milliseconds',
  timestamp_stale: 'X-Service-Timestamp is outside ±5 minutes of the server time',
  signature_invalid: 'X-Service-Signature does not match the request',
  signature_replayed: 'The signature was used before',
  // Create.
  idempotency_conflict: 'The Idempotency-Key was used with a different request body',
  amounts_exhausted: 'Every unique amount of this price is held by another session; retry later',
  organisation_deleted: 'The organisation has been deleted',
  no_wallet: 'The organisation has no receiving wallet on an enabled network',
  rates_unavailable: 'No usable exchange rate right now; retry',
  // Payment-link visits.
  link_inactive: 'The payment link is no longer active',
  link_expired: 'The payment link has expired',
  link_used_up: 'The payment link has been used the most times allowed',
  // Bind refusals.
  session_closed: 'The checkout session no longer accepts a transaction',
  currency_mismatch: 'crypto_currency differs from the asset the session or the transaction is locked to',
  chain_mismatch: 'chain_id differs from the chain the session is paid on or the transaction was bound on',
  payer_mismatch: 'payer_wallet_address differs from the one bound with this transaction',
  too_many_unverified: 'The session holds the most transactions that are not verified yet',
  tx_already_bound: 'The transaction is bound to another checkout session',
  tx_paid_elsewhere: 'The transaction already paid another checkout session',
  tx_contested: 'The transaction pays an amount several sessions ask for; only one of them can bind it',
  // Bind rejections: why the chain's evidence cannot pay the session (stored with a rejected bound transaction).
  not_mined: 'The transaction stayed pending past the grace after it was bound',
  wrong_chain: 'The transaction is on another chain than the one it was bound with, or the session is paid on',
  dropped: 'No node knows the transaction within the grace after it was bound',
  reverted: 'The transaction reverted',
  tx_mined_before_session: 'The transaction was mined before the checkout session was created',
  wrong_asset: 'The transaction pays another asset than the bound one',
  wrong_sender: 'The transaction was not sent by the payer wallet named when it was bound',
  wrong_recipient: 'The transaction pays the bound asset to another address than the session wallet',
  no_payment: 'The transaction transfers nothing of the bound asset to the session wallet',
  bind_too_small: 'The transfer pays under half of what the session asked, too little to select its asset',
  tx_already_credited: 'The transaction is credited to another checkout session',
  superseded: 'A transfer of the exact amount in another asset outranks this bound part; the merchant returns it',
  // Refunds (docs/api/refunds.md#errors).
  refund_exceeds_received: "The session's refunds would add up to more than it received in that asset on that network",
  session_not_refundable: 'The checkout session is still open, or received nothing confirmed in that asset',
  not_overpaid: 'An excess refund needs a session paid more than its price in that asset',
  refund_not_cancellable: 'The refund was sent or has ended: only awaiting_destination and ready refunds cancel',
  refund_state: "The refund's status does not allow this change",
  destination_refused: "The destination is the zero address or the organisation's own wallet or deposit address",
  claim_used: 'The claim link already took an address',
  claim_expired: 'The claim link has expired',
} as const;

export type ReasonCode = keyof typeof REASON_CODES;

export const REASON_CODE_LIST = Object.keys(REASON_CODES) as readonly ReasonCode[];

/** The reasons a rejected bound transaction is stored with (bound_transactions.reason_code). */
export type RejectionCode = Extract<
  ReasonCode,
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
  | 'tx_contested'
  | 'tx_already_credited'
  | 'superseded'
>;

/**
 * The words a rejected bound transaction's text begins with, one per code: the text is rendered from the code
 * (`${REJECTION_WORDS[code]} transaction …`), and rows stored before reason_code existed were coded by them.
 */
export const REJECTION_WORDS: Record<RejectionCode, string> = {
  not_mined: 'not mined:',
  wrong_chain: 'wrong chain:',
  dropped: 'dropped:',
  reverted: 'reverted:',
  tx_mined_before_session: 'mined before this checkout session was created:',
  wrong_asset: 'wrong asset:',
  wrong_sender: 'wrong sender:',
  wrong_recipient: 'wrong recipient:',
  no_payment: 'no payment:',
  bind_too_small: 'too small:',
  tx_contested: 'contested:',
  tx_already_credited: 'already credited:',
  superseded: 'superseded:',
};

/**
 * The reasons of a payment decision that refuses nothing (src/domain/payments/decide.ts): why a transfer is credited,
 * reserved, left, or why a session waits. Never an error body's `code`; refusals and rejections use REASON_CODES.
 */
export const OUTCOME_REASONS = {
  paid_by_amount: 'The transfer is exactly the unique amount the session held when the block was mined',
  paid_to_deposit_address:
    "The transfer is to a deposit-mode session's own address: that session's, whoever sent it, in any amount",
  deposit_asset_not_offered:
    "To a deposit-mode session's address in an asset it does not offer: recorded, reserved for it, counted by nobody",
  deposit_bind_hint: 'A bind on a deposit-mode session is accepted and changes nothing: its address alone pays it',
  paid_by_bind: "A bind verified from the transaction's receipt takes the transfer",
  payment_reincluded: 'A transfer a reorganisation reversed comes back to the session it was credited to',
  amount_reserved: 'The session was asked for the amount but cannot take the transfer now; only its bind takes it',
  amount_shared: 'Several sessions ask for the amount (a reopened session shares it): no session is paid by it',
  no_unique_amount: "The transfer is no session's unique amount: it waits for a bind or an operator",
  asset_selected: 'The exact payment selects its asset and chain at the quote whose claim it matched',
  asset_kept: 'The session is paid in the asset it selected; it gives up the amounts it kept in the others',
  asset_locked: 'Another asset or chain is selected and its parts pay the session: the transfer is reserved for it',
  awaiting_receipt: 'The transaction is pending or unknown to the chain: judged once mined, within the grace',
  confirmed: 'The block is still on the chain with enough confirmations: the payment counts',
  block_replaced: 'The block left the chain: its payments are reversed and rescanned',
  block_kept: 'The recorded block is still on the chain: nothing below it moved',
  paid_in_full: 'The confirmed money sent on time reaches what the session asks',
  paid_within_tolerance: "The confirmed money sent on time is short by no more than the organisation's tolerance",
  overpaid: 'Paid, with more than the tolerance and at least one smallest unit over what was asked',
  partially_paid: 'Some confirmed money sent on time, short of what the session asks',
  payment_reversed: 'Money that counted left the chain (or was superseded): the status follows what is left',
  late_payment: 'Money mined at or after expires_at is recorded and reported; it never makes a session paid',
  totals_unchanged: 'The counted money changes no status',
  expiry_due: "The session's time is up and nothing holds it open, or the in-flight grace is over",
  expiry_held: 'A payment on its way, or a chain not scanned past expires_at, holds the session open',
  not_due: "The session's clock has not run out, or it is closed",
  quote_due: 'The quote ended, nobody paid and nothing holds it: the session is priced again',
  quote_held: 'A payment credited, a bound transaction the chain knows, or a chain not scanned past the end holds it',
} as const;

export type OutcomeReason = keyof typeof OUTCOME_REASONS;

/** Every reason a payment decision carries: a refusal's code, or an outcome's reason. */
export type DecisionReason = ReasonCode | OutcomeReason;
