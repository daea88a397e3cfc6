import type { DomainContext } from '../domain/context.js';
import type { QueryTrace } from './cached-queries.js';
import type { SessionUpdates } from './session-updates.js';

/** What every resolver gets: the domain (as REST gets it), the live session updates, and who is asking. */
export interface GraphqlContext {
  readonly domain: DomainContext;
  readonly updates: SessionUpdates;
  /** The client's address as rate limits count it (TRUST_PROXY decides; docs/api/rest.md#rate-limits). */
  readonly clientAddress: string;
  /** What an HTTP operation read, so its answer can be kept (src/graphql/cached-queries.ts); none over WebSocket. */
  readonly trace?: QueryTrace;
}
