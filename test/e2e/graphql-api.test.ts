import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { PAGE_DOCUMENT_DATA, PAGE_DOCUMENTS, documentIdOf } from '../../src/graphql/page-documents.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { checkoutRequest, PAYER } from '../factories/checkout-request.js';
import { AMOUNT, ISO_DATE, controllableClock, createSession, expectQuotes } from '../support/rest-kassa.js';
import {
  BIND_MUTATION,
  INTERNALS,
  SESSION_FIELDS,
  SESSION_QUERY,
  UPDATES_SUBSCRIPTION,
  graphqlData,
  graphqlError,
  postGraphql,
  restViewOf,
  withoutPayerIdentity,
  subscribe,
} from '../support/graphql-kassa.js';

/** /graphql over real HTTP on a real database: every query and mutation, every error code, the limits. */

const time = controllableClock();
let kassa: TestKassa;
let merchant: TestMerchant;

beforeAll(async () => {
  kassa = await startTestKassa({ clock: time.clock });
  merchant = await createMerchant(kassa.ctx);
});
afterAll(() => kassa?.close());

let hashes = 0;
const newHash = () => `0x${(0x9a1000 + ++hashes).toString(16).padStart(64, 'd')}`;
const UNKNOWN_ID = '7d444840-9dc0-11d1-b245-5ffdce74fad2';

describe('checkoutSession', () => {
  it('answers every public field, the line items and the seconds left, with 8-digit Decimal strings and ISO dates', async () => {
    const start = Date.now();
    time.freeze(start);
    const created = await createSession(
      kassa,
      merchant,
      checkoutRequest({ expires_in_minutes: 30, metadata: { secret: 'm' } }),
    );
    time.freeze(start + 90_500);
    const { checkoutSession: session } = await graphqlData(kassa, SESSION_QUERY, { id: created.session_id });
    time.release();

    expect(session.sessionId).toBe(created.session_id);
    expect(session.status).toBe('WAITING_PAYMENT');
    expect(session.totalAmountFiat).toBe('105.00000000');
    expect(session.expiresAt).toMatch(ISO_DATE);
    expect(session.expiresAt).toBe(created.expires_at);
    expect(session.secondsUntilExpiry).toBe(30 * 60 - 91);
    expectQuotes(
      session.cryptoOptions.map((o: Record<string, string>) => ({
        ticker: o.ticker,
        id: o.id,
        unit_price_fiat: o.unitPriceFiat,
        amount: o.amount,
      })),
      '105',
      'USD',
      ['BTC', 'ETH', 'USDT', 'USDC', 'BNB', 'SOL'],
    );
    expect(session.cryptoOptions.map((o: { ticker: string }) => o.ticker)).toEqual([
      'BTC',
      'ETH',
      'USDT',
      'USDC',
      'BNB',
      'SOL',
    ]);
    expect(session.items).toEqual([
      { name: 'Coffee beans', quantity: 2, unitPrice: '12.50000000', totalPrice: '25.00000000' },
      { name: 'Grinder', quantity: 1, unitPrice: '80.00000000', totalPrice: '80.00000000' },
    ]);
    expect([session.amountPending, session.paymentDetected]).toEqual(['0.00000000', false]);
    // The same values REST shows for the public view, but the payer's identity.
    expect(restViewOf(session)).toEqual(
      withoutPayerIdentity((await kassa.http.get(`/checkout-sessions/${created.session_id}`)).body),
    );
  });

  it("never shows the payer's identity (the merchant's customer id, email, the payer wallet): REST's merchant keeps them", async () => {
    const created = await createSession(
      kassa,
      merchant,
      checkoutRequest({ user: { id: 'customer-secret-9', email: 'hidden@example.com', username: 'hidden' } }),
    );
    for (const field of ['user { id }', 'payerWalletAddress']) {
      const error = await graphqlError(
        kassa,
        `query($id: ID!) { checkoutSession(id: $id) { ${field} } }`,
        { id: created.session_id },
        'GRAPHQL_VALIDATION_FAILED',
        { status: 400 },
      );
      expect(error.message).toMatch(/^Cannot query field "(user|payerWalletAddress)" on type "CheckoutSession"/);
    }
    const whole = await postGraphql(
      kassa,
      `query($id: ID!) { checkoutSession(id: $id) { ${SESSION_FIELDS} paymentOptions { walletAddress uri } transactions { txHash } } }`,
      { id: created.session_id },
    );
    expect(JSON.stringify(whole.body)).not.toMatch(/customer-secret-9|hidden@example.com|"hidden"/);
  });

  it('never shows organisation, owner or product ids or metadata: the schema has no such fields', async () => {
    const created = await createSession(
      kassa,
      merchant,
      checkoutRequest({
        items: [{ name: 'Tea', quantity: 1, unit_price: 3, product_id: 'prod-7' }],
        metadata: { order: 'o-1' },
      }),
    );
    for (const field of ['organisationId', 'ownerUserId', 'metadata', 'organisationName', 'checkoutUrl', 'createdAt']) {
      const error = await graphqlError(
        kassa,
        `query($id: ID!) { checkoutSession(id: $id) { ${field} } }`,
        { id: created.session_id },
        'GRAPHQL_VALIDATION_FAILED',
        { status: 400 },
      );
      expect(error.message).toMatch(new RegExp(`^Cannot query field "${field}" on type "CheckoutSession"\\.`));
    }
    const productId = await graphqlError(
      kassa,
      `query($id: ID!) { checkoutSession(id: $id) { items { productId } } }`,
      { id: created.session_id },
      'GRAPHQL_VALIDATION_FAILED',
      { status: 400 },
    );
    expect(productId.message).toMatch(/Cannot query field "productId" on type "CheckoutLineItem"/);
    const whole = await postGraphql(kassa, SESSION_QUERY, { id: created.session_id });
    expect(JSON.stringify(whole.body)).not.toMatch(new RegExp(`${merchant.organisationId}|prod-7|o-1`));
  });

  it('secondsUntilExpiry is 0 once expired, and the status is settled at read time', async () => {
    const start = Date.now();
    time.freeze(start);
    const created = await createSession(kassa, merchant, checkoutRequest({ expires_in_minutes: 5 }));
    time.freeze(start + 5 * 60_000 + 1);
    const { checkoutSession: session } = await graphqlData(kassa, SESSION_QUERY, { id: created.session_id });
    time.release();
    expect([session.status, session.secondsUntilExpiry]).toEqual(['EXPIRED', 0]);
  });

  it('BAD_USER_INPUT for a malformed id, NOT_FOUND for an unknown one, with the REST messages', async () => {
    const malformed = await graphqlError(kassa, SESSION_QUERY, { id: 'not-a-uuid' }, 'BAD_USER_INPUT');
    expect(malformed.message).toBe('id must be a UUID');
    expect(malformed.extensions.messages).toEqual(['id must be a UUID']);
    expect(malformed.extensions.reason).toBe('validation_failed');
    const unknown = await graphqlError(kassa, SESSION_QUERY, { id: UNKNOWN_ID }, 'NOT_FOUND');
    expect(unknown.message).toBe(`Checkout session ${UNKNOWN_ID} not found`);
    expect(unknown.extensions.reason).toBe('not_found');
  });
});

describe('networks', () => {
  it('lists the enabled networks with chain id, assets, contracts, decimals and confirmations', async () => {
    const { networks } = await graphqlData(
      kassa,
      '{ networks { slug name chainId confirmations assets { ticker native contractAddress decimals } } }',
    );
    expect(networks.map((n: { slug: string }) => n.slug)).toEqual(['local', 'bsc', 'ethereum']);
    const ethereum = networks.find((n: { slug: string }) => n.slug === 'ethereum');
    expect(ethereum).toEqual({
      slug: 'ethereum',
      name: 'Ethereum',
      chainId: '1',
      confirmations: 12,
      assets: [
        { ticker: 'ETH', native: true, contractAddress: null, decimals: 18 },
        { ticker: 'USDT', native: false, contractAddress: '0xdAC17F958D2ee523a2206206994597C13D831ec7', decimals: 6 },
        { ticker: 'USDC', native: false, contractAddress: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', decimals: 6 },
      ],
    });
    const bsc = networks.find((n: { slug: string }) => n.slug === 'bsc');
    expect(bsc.chainId).toBe('56');
    expect(bsc.assets.map((a: { ticker: string }) => a.ticker)).toEqual(['BTC', 'ETH', 'USDT', 'USDC', 'BNB', 'SOL']);
    expect(bsc.assets.find((a: { ticker: string }) => a.ticker === 'BNB')).toEqual({
      ticker: 'BNB',
      native: true,
      contractAddress: null,
      decimals: 18,
    });
  });

  it('never exposes RPC URLs (they may carry provider keys)', async () => {
    const error = await graphqlError(kassa, '{ networks { rpcUrls } }', undefined, 'GRAPHQL_VALIDATION_FAILED', {
      status: 400,
    });
    expect(error.message).toMatch(/Cannot query field "rpcUrls"/);
  });
});

describe('bindTransaction', () => {
  it('binds, answers the fields of the bind answer in camelCase, and a replay answers idempotent: true', async () => {
    const created = await createSession(kassa, merchant, checkoutRequest());
    const tx = newHash();
    const input = {
      txHash: tx,
      chainId: '0x38',
      cryptoCurrency: 'BNB',
      payerWalletAddress: PAYER.toUpperCase().replace('0X', '0x'),
    };
    const first = await graphqlData(kassa, BIND_MUTATION, { sessionId: created.session_id, input });
    expect(first.bindTransaction).toEqual({
      sessionId: created.session_id,
      boundTxHash: tx,
      cryptoCurrency: 'BNB',
      totalAmountCrypto: created.crypto_options.find((o: { ticker: string }) => o.ticker === 'BNB').amount,
      status: 'WAITING_PAYMENT',
      idempotent: false,
    });
    expect(first.bindTransaction.totalAmountCrypto).toMatch(AMOUNT);
    const replay = await graphqlData(kassa, BIND_MUTATION, { sessionId: created.session_id, input });
    expect(replay.bindTransaction).toEqual({ ...first.bindTransaction, idempotent: true });
    // No chain knows the hash here: the bind is a candidate the page can see, and locks nothing.
    const { checkoutSession } = await graphqlData(
      kassa,
      `query($id: ID!) { checkoutSession(id: $id) { boundTxHash cryptoCurrency transactions { txHash chainId cryptoCurrency state reason } } }`,
      { id: created.session_id },
    );
    expect(checkoutSession).toEqual({
      boundTxHash: null,
      cryptoCurrency: null,
      transactions: [{ txHash: tx, chainId: '56', cryptoCurrency: 'BNB', state: 'UNVERIFIED', reason: null }],
    });
  });

  it('BAD_USER_INPUT lists every problem as REST does; NOT_FOUND; CONFLICT', async () => {
    const created = await createSession(kassa, merchant, checkoutRequest());
    const invalid = await graphqlError(
      kassa,
      BIND_MUTATION,
      { sessionId: created.session_id, input: { txHash: 'x', chainId: 'y', payerWalletAddress: 'w' } },
      'BAD_USER_INPUT',
    );
    expect(invalid.extensions.messages).toEqual([
      'tx_hash must match ^0x[a-fA-F0-9]{64}$ (0x and 64 hex characters)',
      'chain_id must be an EIP-155 chain id, decimal ("56") or hex ("0x38")',
      'payer_wallet_address must match ^0x[a-fA-F0-9]{40}$ (0x and 40 hex characters)',
    ]);
    expect(invalid.message).toBe(invalid.extensions.messages.join('; '));
    expect(invalid.extensions.reason).toBe('validation_failed');

    const unknown = await graphqlError(
      kassa,
      BIND_MUTATION,
      { sessionId: UNKNOWN_ID, input: { txHash: newHash(), chainId: '1', cryptoCurrency: 'ETH' } },
      'NOT_FOUND',
    );
    expect(unknown.message).toBe(`Checkout session ${UNKNOWN_ID} not found`);

    const tx = newHash();
    await graphqlData(kassa, BIND_MUTATION, {
      sessionId: created.session_id,
      input: { txHash: tx, chainId: '1', cryptoCurrency: 'ETH' },
    });
    const conflict = await graphqlError(
      kassa,
      BIND_MUTATION,
      { sessionId: created.session_id, input: { txHash: tx, chainId: '1', cryptoCurrency: 'USDT' } },
      'CONFLICT',
    );
    expect(conflict.message).toBe('crypto_currency USDT differs from ETH, the asset this transaction was bound for');
    // The same stable reason as REST's `code` (docs/api/graphql.md#errors).
    expect(conflict.extensions.reason).toBe('currency_mismatch');
  });

  it('an unknown ticker is refused by the CryptoTicker enum itself, as BAD_USER_INPUT', async () => {
    const created = await createSession(kassa, merchant, checkoutRequest());
    const error = await graphqlError(
      kassa,
      BIND_MUTATION,
      { sessionId: created.session_id, input: { txHash: newHash(), chainId: '1', cryptoCurrency: 'DOGE' } },
      'BAD_USER_INPUT',
      { status: 400 },
    );
    expect(error.message).toMatch(/Value "DOGE" does not exist in "CryptoTicker" enum/);
  });
});

describe("trusted documents: the hosted page's documents by id (src/graphql/page-documents.ts)", () => {
  const byId = (name: keyof typeof PAGE_DOCUMENTS, variables: Record<string, unknown>) =>
    `/graphql?${new URLSearchParams({ documentId: PAGE_DOCUMENT_DATA[name].id, variables: JSON.stringify(variables) })}`;

  it('each id is the first 16 hex digits of the SHA-256 of its text, which the page data carries', () => {
    for (const [name, text] of Object.entries(PAGE_DOCUMENTS)) {
      expect(PAGE_DOCUMENT_DATA[name as keyof typeof PAGE_DOCUMENTS]).toEqual({ id: documentIdOf(text), text });
      expect(documentIdOf(text)).toMatch(/^[0-9a-f]{16}$/);
    }
  });

  it('a query by id over GET is answered as its text is, with no CSRF preflight header (it reads public data only)', async () => {
    const created = await createSession(kassa, merchant, checkoutRequest());
    const variables = { id: created.session_id };
    time.freeze(Date.now());
    const byText = await postGraphql(kassa, PAGE_DOCUMENTS.CheckoutSession, variables);
    const viaId = await kassa.http.get(byId('CheckoutSession', variables));
    time.release();
    expect(viaId.status, viaId.text).toBe(200);
    expect(viaId.body).toEqual(byText.body);
    expect(viaId.body.data.checkoutSession.sessionId).toBe(created.session_id);
    const page = await kassa.http.get(byId('CheckoutPage', variables));
    expect(page.status).toBe(200);
    expect(page.body.data.networks).toHaveLength(3);
    // The parameter's name is read as Apollo reads the others, percent-encoding and all.
    const encoded = await kassa.http.get(byId('CheckoutPage', variables).replace('documentId', 'document%49d'));
    expect(encoded.status, encoded.text).toBe(200);
    expect(encoded.body.data.networks).toHaveLength(3);
  });

  it('the mutation by id over POST binds; over GET it is refused as a possible CSRF, or 405 with the header', async () => {
    const created = await createSession(kassa, merchant, checkoutRequest());
    const tx = newHash();
    const variables = { sessionId: created.session_id, input: { txHash: tx, chainId: '0x38', cryptoCurrency: 'BNB' } };
    const simple = await kassa.http.get(byId('BindTransaction', variables));
    expect(simple.status).toBe(400);
    expect(simple.text).toContain('Cross-Site Request Forgery');
    const preflighted = await kassa.http.get(byId('BindTransaction', variables)).set('Apollo-Require-Preflight', '1');
    expect(preflighted.status).toBe(405);
    const bound = await kassa.http
      .post('/graphql')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ documentId: PAGE_DOCUMENT_DATA.BindTransaction.id, variables }));
    expect(bound.status, bound.text).toBe(200);
    expect(bound.body.data.bindTransaction).toMatchObject({ boundTxHash: tx, status: 'WAITING_PAYMENT' });
  });

  it('an unknown id is PERSISTED_QUERY_NOT_FOUND (400); an id beside a query, not a string or twice, BAD_REQUEST', async () => {
    const id = (await createSession(kassa, merchant, checkoutRequest())).session_id;
    const variables = JSON.stringify({ id });
    const cases = [
      [
        kassa.http.get(`/graphql?${new URLSearchParams({ documentId: '0123456789abcdef', variables })}`),
        'PERSISTED_QUERY_NOT_FOUND',
      ],
      [
        kassa.http
          .post('/graphql')
          .set('Content-Type', 'application/json')
          .send(JSON.stringify({ documentId: 'nope', variables: { id } })),
        'PERSISTED_QUERY_NOT_FOUND',
      ],
      [
        kassa.http
          .get(
            `/graphql?${new URLSearchParams({ documentId: PAGE_DOCUMENT_DATA.CheckoutSession.id, query: '{ networks { slug } }', variables })}`,
          )
          .set('Apollo-Require-Preflight', '1'),
        'BAD_REQUEST',
      ],
      [
        kassa.http
          .post('/graphql')
          .set('Content-Type', 'application/json')
          .send(JSON.stringify({ documentId: PAGE_DOCUMENT_DATA.CheckoutSession.id, query: '{ networks { slug } }' })),
        'BAD_REQUEST',
      ],
      [
        kassa.http
          .post('/graphql')
          .set('Content-Type', 'application/json')
          .send(JSON.stringify({ documentId: 7 })),
        'BAD_REQUEST',
      ],
      [
        kassa.http.get(
          `/graphql?${new URLSearchParams([
            ['documentId', PAGE_DOCUMENT_DATA.CheckoutSession.id],
            ['documentId', PAGE_DOCUMENT_DATA.BindTransaction.id],
            ['variables', variables],
          ])}`,
        ),
        'BAD_REQUEST',
      ],
    ] as const;
    for (const [request, code] of cases) {
      const response = await request;
      expect(response.status, response.text).toBe(400);
      expect(response.body.errors).toHaveLength(1);
      expect(response.body.errors[0].extensions.code).toBe(code);
      expect(response.body.data).toBeUndefined();
    }
  });

  it('a query sent by its text over GET still needs the preflight header', async () => {
    const id = (await createSession(kassa, merchant, checkoutRequest())).session_id;
    const url = `/graphql?${new URLSearchParams({ query: PAGE_DOCUMENTS.CheckoutSession, variables: JSON.stringify({ id }) })}`;
    const refused = await kassa.http.get(url);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('Cross-Site Request Forgery');
  });
});

describe('unexpected failures', () => {
  it('INTERNAL_SERVER_ERROR "Internal server error", with no internals, when the database fails', async () => {
    const broken = await startTestKassa({
      database: kassa.database,
      override: {
        store: {
          ...kassa.ctx.store,
          sessions: {
            ...kassa.ctx.store.sessions,
            findById: async () => {
              throw new Error(
                'PrismaClientKnownRequestError P2010: SELECT * FROM checkout_sessions at Object.<anonymous> (/srv/db.ts:12:3)',
              );
            },
          },
        },
      },
    });
    try {
      const error = await graphqlError(broken, SESSION_QUERY, { id: UNKNOWN_ID }, 'INTERNAL_SERVER_ERROR');
      expect(error.message).toBe('Internal server error');
      expect(Object.keys(error.extensions)).toEqual(['code']);
      // And the same over WebSocket.
      const updates = subscribe(broken, UPDATES_SUBSCRIPTION, { id: UNKNOWN_ID });
      await updates.completed;
      await updates.dispose();
      expect(updates.results).toEqual([
        {
          errors: [
            expect.objectContaining({
              message: 'Internal server error',
              extensions: { code: 'INTERNAL_SERVER_ERROR' },
            }),
          ],
        },
      ]);
      expect(JSON.stringify(updates.results)).not.toMatch(INTERNALS);
    } finally {
      await broken.close();
    }
  });
});

describe('queries that do not parse', () => {
  const counted = async (status: number) => {
    const metrics = (await kassa.http.get('/metrics')).text;
    const line = new RegExp(
      `kassa_http_request_duration_seconds_count\\{method="POST",route="/graphql",status="${status}"\\} (\\d+)`,
    ).exec(metrics);
    return Number(line?.[1] ?? 0);
  };

  it('answer 400 GRAPHQL_PARSE_FAILED with the syntax error, not 500, and count as 400s', async () => {
    const [before400, before500] = [await counted(400), await counted(500)];
    const cases: Array<[string, string]> = [
      ['{', 'Syntax Error: Expected Name, found <EOF>.'],
      ['{ networks { slug }', 'Syntax Error: Expected Name, found <EOF>.'],
      ['}', 'Syntax Error: Unexpected "}".'],
      // 2 + 500 × 4 tokens: the parser stops at the limit, before validation.
      [`{ ${'networks { slug } '.repeat(500)}}`, 'Syntax Error: Token limit of 2000 exceeded.'],
    ];
    for (const [query, message] of cases) {
      const error = await graphqlError(kassa, query, undefined, 'GRAPHQL_PARSE_FAILED', { status: 400 });
      expect(error.message).toBe(message);
      expect(Object.keys(error.extensions)).toEqual(['code']);
    }
    expect(await counted(400)).toBe(before400 + cases.length);
    expect(await counted(500)).toBe(before500);
  });

  it('a query of exactly 2000 tokens parses', async () => {
    // 2 + 333 × 6 = 2000 tokens: parsed, then refused by the alias and cost limits instead (validation errors).
    const query = `{ ${Array.from({ length: 333 }, (_, i) => `n${i}: networks { slug }`).join(' ')} }`;
    const response = await postGraphql(kassa, query);
    expect(response.status).toBe(400);
    expect(response.body.errors.map((e: { extensions: { code: string } }) => e.extensions.code)).toEqual([
      'GRAPHQL_VALIDATION_FAILED',
      'GRAPHQL_VALIDATION_FAILED',
    ]);
    expect(response.body.errors.map((e: { message: string }) => e.message)).toContainEqual(
      expect.stringMatching(/Aliases limit of 15 exceeded, found 333/),
    );
  });
});

describe('protection', () => {
  const deepQuery = (depth: number) => {
    // __type(name:) { ofType { ofType … } } nests as deep as asked, on any schema.
    let selection = 'name';
    for (let i = 0; i < depth; i++) selection = `ofType { ${selection} }`;
    return `{ __type(name: "CheckoutSession") { ${selection} } }`;
  };

  it('refuses a query nested deeper than 10 levels with a clear validation error', async () => {
    await graphqlData(kassa, deepQuery(8));
    const error = await graphqlError(kassa, deepQuery(12), undefined, 'GRAPHQL_VALIDATION_FAILED', { status: 400 });
    expect(error.message).toMatch(/depth limit of 10 exceeded/i);
  });

  it('refuses more than 15 aliases', async () => {
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `n${i}: networks { slug }`).join(' ')} }`;
    await graphqlData(kassa, aliases(15));
    const error = await graphqlError(kassa, aliases(16), undefined, 'GRAPHQL_VALIDATION_FAILED', { status: 400 });
    expect(error.message).toMatch(/Aliases limit of 15 exceeded, found 16/);
  });

  it('refuses an operation whose cost is over the limit (1000), while the whole page (session and networks) passes', async () => {
    const created = await createSession(kassa, merchant, checkoutRequest());
    // What the checkout page asks for: the session with how to pay and the bound transactions, and the networks.
    const fields = `${SESSION_FIELDS} paymentOptions { network chainId ticker native contractAddress decimals walletAddress amount baseUnits uri }
      transactions { txHash chainId cryptoCurrency state reason }`;
    const page = `query($id: ID!) { checkoutSession(id: $id) { ${fields} } networks { slug name chainId confirmations assets { ticker native contractAddress decimals } } }`;
    expect((await graphqlData(kassa, page, { id: created.session_id })).checkoutSession.sessionId).toBe(
      created.session_id,
    );
    const costly = `query($id: ID!) { ${Array.from({ length: 15 }, (_, i) => `s${i}: checkoutSession(id: $id) { ${fields} }`).join(' ')} }`;
    const error = await graphqlError(kassa, costly, { id: created.session_id }, 'GRAPHQL_VALIDATION_FAILED', {
      status: 400,
    });
    expect(error.message).toMatch(/Query Cost limit of 1000 exceeded, found \d+/);
  });

  it('refuses batched requests', async () => {
    const response = await kassa.http
      .post('/graphql')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify([{ query: '{ networks { slug } }' }, { query: '{ networks { name } }' }]));
    expect(response.status).toBe(400);
    expect(response.body.errors[0]).toMatchObject({
      message: 'Operation batching disabled.',
      extensions: { code: 'BAD_REQUEST' },
    });
  });

  it('CSRF prevention: a simple (form-like) request is refused, a preflighted GET is served', async () => {
    const simple = await kassa.http
      .post('/graphql')
      .set('Content-Type', 'text/plain')
      .send(JSON.stringify({ query: '{ networks { slug } }' }));
    expect(simple.status).toBe(400);
    expect(simple.body.errors[0].message).toMatch(/Cross-Site Request Forgery/);
    const plainGet = await kassa.http.get('/graphql').query({ query: '{ networks { slug } }' });
    expect(plainGet.status).toBe(400);
    const preflighted = await kassa.http
      .get('/graphql')
      .query({ query: '{ networks { slug } }' })
      .set('apollo-require-preflight', '1');
    expect(preflighted.status).toBe(200);
    expect(preflighted.body.data.networks).toHaveLength(3);
  });

  it('refuses a body over 100 KB with 413 in the GraphQL error form, and malformed JSON with 400', async () => {
    const big = await kassa.http
      .post('/graphql')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ query: `{ networks { slug } } # ${'x'.repeat(101 * 1024)}` }));
    expect(big.status).toBe(413);
    expect(big.body).toEqual({
      errors: [
        { message: 'Request body is larger than the limit of 100 KB', extensions: { code: 'PAYLOAD_TOO_LARGE' } },
      ],
    });
    const malformed = await kassa.http.post('/graphql').set('Content-Type', 'application/json').send('{"query":');
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({
      errors: [{ message: 'Malformed JSON in the request body', extensions: { code: 'BAD_REQUEST' } }],
    });
  });

  it('GraphQL requests are counted in the metrics under their own route', async () => {
    await graphqlData(kassa, '{ networks { slug } }');
    const metrics = (await kassa.http.get('/metrics')).text;
    expect(metrics).toMatch(
      /kassa_http_request_duration_seconds_count\{method="POST",route="\/graphql",status="200"\} [1-9]/,
    );
  });

  it('REST keeps its own routes and 404 body beside /graphql', async () => {
    const response = await kassa.http.get('/graphql-nope');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ statusCode: 404, message: 'Cannot GET /graphql-nope', error: 'Not Found' });
    expect(JSON.stringify(response.body)).not.toMatch(INTERNALS);
  });

  it('outside production: introspection and the Sandbox landing page are on', async () => {
    const { __schema } = await graphqlData(kassa, '{ __schema { queryType { name } } }');
    expect(__schema.queryType.name).toBe('Query');
    // The full introspection query Sandbox sends passes the depth, cost and token limits.
    const full = await graphqlData(
      kassa,
      getIntrospectionQuery({
        descriptions: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        inputValueDeprecation: true,
      }),
    );
    expect(full.__schema.types.map((t: { name: string }) => t.name)).toEqual(
      expect.arrayContaining(['CheckoutSession', 'Decimal', 'DateTime', 'CryptoTicker']),
    );
    const landing = await kassa.http.get('/graphql').set('Accept', 'text/html');
    expect(landing.status).toBe(200);
    expect(landing.headers['content-type']).toMatch(/^text\/html/);
    expect(landing.text).toMatch(/sandbox/i);
  });

  it('with KASSA_GRAPHQL_INTROSPECTION and KASSA_GRAPHQL_SANDBOX off (the production default): neither is served', async () => {
    const closed = await startTestKassa({
      database: kassa.database,
      env: { KASSA_GRAPHQL_INTROSPECTION: 'false', KASSA_GRAPHQL_SANDBOX: 'false' },
    });
    try {
      const error = await graphqlError(
        closed,
        '{ __schema { queryType { name } } }',
        undefined,
        'GRAPHQL_VALIDATION_FAILED',
        { status: 400 },
      );
      expect(error.message).toMatch(/introspection is not allowed/i);
      const landing = await closed.http.get('/graphql').set('Accept', 'text/html');
      expect(landing.text).not.toMatch(/sandbox/i);
      // Without introspection, field suggestions would leak the schema too.
      const typo = await graphqlError(closed, '{ networks { slugg } }', undefined, 'GRAPHQL_VALIDATION_FAILED', {
        status: 400,
      });
      expect(typo.message).not.toMatch(/Did you mean/);
      expect(await graphqlData(closed, '{ networks { slug } }')).toEqual({
        networks: [{ slug: 'local' }, { slug: 'bsc' }, { slug: 'ethereum' }],
      });
    } finally {
      await closed.close();
    }
  });
});
