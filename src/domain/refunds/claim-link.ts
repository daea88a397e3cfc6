import type { Hex } from 'viem';
import type { DomainContext } from '../context.js';
import { conflict, gone, invalid, notFound } from '../shared/errors.js';
import type { Network } from '../shared/networks.js';
import { isUuid } from '../shared/uuid.js';
import { checkClaimAddress, claimAddressProblem } from './claim-address.js';
import { claimProofMessage, isProofSignature, proofSigner, type ClaimProofTerms } from './claim-proof.js';
import type { Refund } from './refund.js';
import { submitDestination } from './refund-transitions.js';

/**
 * The claim link `{checkout_base_url}/r/<refund id>` (docs/refund-claims.md#the-claim-page): the payer reads what is
 * refunded and gives one address, optionally proved by the wallet that paid.
 */

/** A claim link that still takes an address, with what its page shows. */
export interface OpenClaim {
  readonly refund: Refund;
  readonly network: Network;
  readonly organisationName: string;
  /** The proof's text with `{destination}` where the payer's address goes. */
  readonly proofTemplate: string;
}

const DESTINATION_SLOT = '{destination}';

function proofTerms(refund: Refund, network: Network, destination: string): ClaimProofTerms {
  const { id: refundId, amount, asset } = refund;
  return { refundId, amount, asset, networkName: network.name, chainId: network.chainId, destination };
}

/**
 * The refund behind a claim link, refused when the link cannot take an address: a malformed id (400), none (404), a
 * link already used (409 claim_used), expired (410 claim_expired) or cancelled (410 refund_state).
 */
export async function openClaim(ctx: DomainContext, refundId: string): Promise<OpenClaim> {
  if (!isUuid(refundId)) throw invalid(['id must be a UUID']);
  const refund = await ctx.store.refunds.findById(refundId.toLowerCase());
  // A refund whose destination the merchant gave has no claim link.
  if (!refund || (refund.claimExpiresAt === null && refund.destinationSource === 'merchant'))
    throw notFound(`Refund ${refundId} has no claim link`);
  if (refund.destination !== null) throw conflict('This refund link already took an address', 'claim_used');
  if (refund.status === 'cancelled') throw gone('This refund was cancelled', 'refund_state');
  const expired = refund.claimExpiresAt === null || refund.claimExpiresAt.getTime() <= ctx.clock().getTime();
  if (refund.status === 'expired' || expired) throw gone('This refund link has expired', 'claim_expired');
  if (refund.status !== 'awaiting_destination')
    throw conflict(`This refund is ${refund.status} and takes no address`, 'refund_state');
  const network = ctx.networks.find((n) => n.slug === refund.network);
  if (!network) throw gone(`This refund is on ${refund.network}, which this Kassa no longer serves`, 'refund_state');
  const organisation = await ctx.store.organisations.findById(refund.organisationId);
  return {
    refund,
    network,
    organisationName: organisation?.name ?? '',
    proofTemplate: claimProofMessage(proofTerms(refund, network, DESTINATION_SLOT)),
  };
}

export interface ClaimSubmission {
  readonly address: string;
  /** personal_sign of the proof's text by a wallet that paid the session; optional. */
  readonly signature?: string | null;
}

/** The wallets the session was paid from in the refund's asset on its network, lower-case. */
async function payersOf(ctx: DomainContext, refund: Refund): Promise<string[]> {
  const session = await ctx.store.refunds.findSession(refund.sessionId);
  const received = session?.received.filter((r) => r.network === refund.network && r.asset === refund.asset) ?? [];
  return received.flatMap((r) => r.payers);
}

/**
 * Takes the payer's address (awaiting_destination → ready, once). A signature must recover to a wallet that paid the
 * session in this asset on this network, else nothing is written (400 claim_proof_invalid).
 */
export async function submitClaim(ctx: DomainContext, refundId: string, submission: ClaimSubmission): Promise<Refund> {
  const { refund, network } = await openClaim(ctx, refundId);
  const check = checkClaimAddress(submission.address);
  if (!check.ok)
    throw invalid(
      [claimAddressProblem(check, network.name)],
      check.reason === 'foreign_format' ? 'address_other_network' : undefined,
    );
  const signature = submission.signature ?? null;
  if (signature === null) return submitDestination(ctx, refund.id, { address: check.address, source: 'claim' });
  if (!isProofSignature(signature))
    throw invalid(
      ['signature must be a personal_sign signature: 0x and 130 hexadecimal digits'],
      'claim_proof_invalid',
    );
  const terms = proofTerms(refund, network, check.address);
  const signer = await proofSigner(terms, signature as Hex, await payersOf(ctx, refund));
  if (!signer)
    throw invalid(
      [
        'signature does not prove this address: it must be made by a wallet that paid this session, over the ' +
          'message naming this refund, its amount and this address',
      ],
      'claim_proof_invalid',
    );
  const proof = { message: claimProofMessage(terms), signature: signature.toLowerCase(), address: signer };
  return submitDestination(ctx, refund.id, { address: check.address, source: 'claim_signed', proof });
}
