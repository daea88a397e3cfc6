import type { IncomingHttpHeaders } from 'node:http';
import type { DomainContext } from '../domain/context.js';
import { createSignedCheckoutSession } from '../domain/sessions/create-checkout-session.js';
import { toMerchantView } from '../domain/sessions/checkout-session.views.js';
import { invalid } from '../domain/shared/errors.js';
import { parseCreateCheckout } from './create-checkout.schema.js';
import { readJsonBytes } from '../http/json-body.js';
import { signedRequestFrom } from './signed-request.js';

/** A create request as either transport holds it: headers, the body's bytes, and the caller's address. */
export interface CreateCall {
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: Buffer;
  /** As rate limits count it (docs/api/rest.md#rate-limits). */
  readonly clientAddress: string;
}

export interface CreateAnswer {
  /** The merchant view of the session, as JSON. */
  readonly body: Buffer;
  /** An Idempotency-Key replay: answered with `Idempotent-Replayed: true`. */
  readonly replayed: boolean;
}

/**
 * POST /checkout-sessions from the request's parts to the 201's body (docs/api/rest.md#endpoints), shared by the
 * Express route and the create lane; what it throws goes through the one error mapping (restErrorAnswer).
 */
export async function answerCreate(ctx: DomainContext, call: CreateCall): Promise<CreateAnswer> {
  // Authentication runs before any look at the body; create keeps `{timestamp}.{rawBody}`
  // (docs/api/rest.md#signing-a-merchant-call).
  const result = await createSignedCheckoutSession(ctx, signedRequestFrom(call, null), () => {
    const parsed = parseCreateCheckout(readJsonBytes(call.headers['content-type'], call.rawBody));
    if (!parsed.ok) throw invalid(parsed.problems);
    return { input: parsed.input, idempotencyKey: idempotencyKey(call.headers['idempotency-key']) };
  });
  const view = result.merchantView ?? toMerchantView(result.session, ctx.checkoutBaseUrl);
  return { body: Buffer.from(JSON.stringify(view), 'utf8'), replayed: result.replayed };
}

// docs/api/rest.md#create-rules-and-limits: 1–255 printable characters, scoped to the organisation.
function idempotencyKey(key: string | string[] | undefined): string | undefined {
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !/^[\x21-\x7e][\x20-\x7e]{0,254}$/.test(key) || key.trim() !== key) {
    throw invalid(['Idempotency-Key must be 1 to 255 printable ASCII characters']);
  }
  return key;
}
