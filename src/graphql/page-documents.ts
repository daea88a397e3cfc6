import { createHash } from 'node:crypto';
import { Kind, parse } from 'graphql';

/**
 * The hosted page's GraphQL documents, sent by `documentId` (the first 16 hex digits of the text's SHA-256): a short
 * poll URL, and no text but these is ever substituted (docs/api/graphql.md#trusted-documents).
 */

const SESSION_FIELDS = `sessionId status cryptoCurrency totalAmountCrypto amountReceived amountDue amountPending
    paymentDetected pendingCoversDue fiatCurrency totalAmountFiat supportedNetworks secondsUntilExpiry boundTxHash
    chainId paymentOptions { network chainId ticker native contractAddress decimals walletAddress amount baseUnits uri }
    transactions { txHash chainId cryptoCurrency state reason }
    items { name quantity unitPrice totalPrice } expiresAt`;

/**
 * What of a session can change while the page is open: an option is fully given by its network, asset and amount, so
 * the poll asks only those, and the page reads the whole session again when they differ.
 */
const CHANGING_FIELDS = `status cryptoCurrency totalAmountCrypto amountReceived amountDue amountPending paymentDetected
    pendingCoversDue secondsUntilExpiry boundTxHash chainId paymentOptions { network ticker amount }
    transactions { txHash chainId cryptoCurrency state reason }`;

/** The page's documents by operation name. */
export const PAGE_DOCUMENTS = {
  CheckoutPage: `query CheckoutPage($id: ID!) {
    checkoutSession(id: $id) { ${SESSION_FIELDS} }
    networks { slug name chainId confirmations } }`,
  CheckoutSession: `query CheckoutSession($id: ID!) { checkoutSession(id: $id) { ${SESSION_FIELDS} } }`,
  /** The poll when the WebSocket is not there (web/checkout-live.js: refresh): under a quarter of CheckoutSession's
   * answer. */
  CheckoutPoll: `query CheckoutPoll($id: ID!) { checkoutSession(id: $id) { ${CHANGING_FIELDS} } }`,
  CheckoutUpdates: `subscription CheckoutUpdates($id: ID!) { checkoutSessionUpdated(id: $id) { ${SESSION_FIELDS} } }`,
  BindTransaction: `mutation BindTransaction($sessionId: ID!, $input: BindTransactionInput!) {
    bindTransaction(sessionId: $sessionId, input: $input) { boundTxHash cryptoCurrency totalAmountCrypto status } }`,
} as const;

export type PageDocumentName = keyof typeof PAGE_DOCUMENTS;

/** A document's id: the first 16 hex digits of the SHA-256 of its text. */
export function documentIdOf(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
}

interface TrustedDocument {
  readonly text: string;
  /** A query: sent over GET it needs no CSRF preflight header (see above). */
  readonly query: boolean;
}

/** What the page is given (its page data): each document's id and text (the text for a server that lacks the id). */
export const PAGE_DOCUMENT_DATA: Readonly<Record<PageDocumentName, { id: string; text: string }>> = Object.fromEntries(
  Object.entries(PAGE_DOCUMENTS).map(([name, text]) => [name, { id: documentIdOf(text), text }]),
) as Record<PageDocumentName, { id: string; text: string }>;

const TRUSTED = new Map<string, TrustedDocument>(
  Object.values(PAGE_DOCUMENT_DATA).map(({ id, text }) => {
    const [definition] = parse(text).definitions;
    const query = definition?.kind === Kind.OPERATION_DEFINITION && definition.operation === 'query';
    return [id, { text, query }];
  }),
);

/** The query string parameter and body field that name a trusted document. */
export const DOCUMENT_ID = 'documentId';

/** A request naming a trusted document, as Apollo is to see it; or why it is refused. */
export type TrustedRequest =
  | { readonly search: string; readonly body: unknown; readonly trustedQuery: boolean }
  | { readonly refused: { readonly code: string; readonly message: string } };

/**
 * The request with a `documentId` replaced by its text (GET query string, POST JSON body); an unknown or doubly named
 * document, or one sent with a `query`, is refused. `trustedQuery`: a GET of a trusted query.
 */
export function withTrustedDocument(method: string, search: string, body: unknown): TrustedRequest {
  if (method === 'GET') {
    const params = new URLSearchParams(search);
    const ids = params.getAll(DOCUMENT_ID);
    if (ids.length === 0) return { search, body, trustedQuery: false };
    if (ids.length > 1) return { refused: { code: 'BAD_REQUEST', message: `Send ${DOCUMENT_ID} once` } };
    const document = known(ids[0]!, params.has('query'));
    if ('refused' in document) return document;
    params.delete(DOCUMENT_ID);
    params.set('query', document.text);
    return { search: `?${params.toString()}`, body, trustedQuery: document.query };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body) || !(DOCUMENT_ID in body))
    return { search, body, trustedQuery: false };
  const { [DOCUMENT_ID]: id, ...rest } = body as Record<string, unknown>;
  if (typeof id !== 'string') return { refused: { code: 'BAD_REQUEST', message: `${DOCUMENT_ID} must be a string` } };
  const document = known(id, 'query' in rest);
  if ('refused' in document) return document;
  return { search, body: { ...rest, query: document.text }, trustedQuery: false };
}

function known(id: string, withQuery: boolean): TrustedDocument | { refused: { code: string; message: string } } {
  if (withQuery) return { refused: { code: 'BAD_REQUEST', message: `Send either query or ${DOCUMENT_ID}, not both` } };
  const document = TRUSTED.get(id);
  if (document === undefined)
    return {
      refused: {
        code: 'PERSISTED_QUERY_NOT_FOUND',
        message: `Unknown ${DOCUMENT_ID}: this server knows only the hosted page's documents; send the query text`,
      },
    };
  return document;
}
