import type { DomainContext } from '../domain/context.js';
import type { CheckoutSessionChanges } from '../db/checkout-session-changes.js';

/** What every resolver gets: the domain (as REST gets it) and the live change feed. */
export interface GraphqlContext {
  readonly domain: DomainContext;
  readonly changes: CheckoutSessionChanges;
}
