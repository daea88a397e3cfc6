// The refund claim page's data (/r/<id>, src/rest/refund-claim.routes.ts). Types only: never served.

import type { CommonPageData } from './types.js';

export interface RefundPageData extends CommonPageData {
  readonly refundId: string;
  /** Exactly 8 fractional digits, as the API writes amounts. */
  readonly amount: string;
  readonly asset: string;
  readonly network: { readonly slug: string; readonly name: string; readonly chainId: number };
  readonly shop: string;
  readonly claimExpiresAt: string;
  /** The EIP-191 proof's text with `{destination}` where the lower-case address goes. */
  readonly proofTemplate: string;
}

/** What POST /r/<id> answers. */
export interface ClaimAnswer {
  readonly refund_id: string;
  readonly status: string;
  readonly destination: string;
  readonly destination_source: 'claim' | 'claim_signed';
  readonly proof_address: string | null;
}
