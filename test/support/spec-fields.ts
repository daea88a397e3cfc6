// The field sets of the spec's views, written out from the spec (not from src/), for exact-shape checks.

/** docs/api/rest.md#the-public-view, exactly. */
export const PUBLIC_FIELDS = [
  'session_id',
  'status',
  'source',
  'from_payment_link',
  'anonymous',
  'requires_payer_identity',
  'identity_options',
  'product_payment_link_id',
  'total_amount_crypto',
  'crypto_currency',
  'crypto_options',
  'fiat_currency',
  'total_amount_fiat',
  'wallet_address',
  'supported_networks',
  'expires_at',
  'overpaid',
  'bound_tx_hash',
  'payer_wallet_address',
  'chain_id',
  'user',
] as const;

/** docs/api/rest.md#the-merchant-view: the public fields plus these. */
export const MERCHANT_ONLY_FIELDS = [
  'organisation_id',
  'organisation_name',
  'organisation_deleted',
  'owner_user_id',
  'checkout_url',
  'items',
  'metadata',
  'created_at',
] as const;
