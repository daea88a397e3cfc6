import type { DomainContext } from '../domain/context.js';
import type { SessionUpdates } from './session-updates.js';

/** What every resolver gets: the domain (as REST gets it) and the live session updates. */
export interface GraphqlContext {
  readonly domain: DomainContext;
  readonly updates: SessionUpdates;
}
