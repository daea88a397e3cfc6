import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import {
  dashboardMember,
  dashboardRequest,
  merchantGraphql,
  type DashboardMember,
} from '../support/dashboard-client.js';
import { createSession, postBind } from '../support/rest-kassa.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { FAST_WEBHOOKS, signedRequest, startDeliveryLoop } from '../support/webhooks.js';

/**
 * The merchant GraphQL API at /dashboard/graphql (docs/dashboard.md#merchant-graphql) on a real anvil, a real
 * Kassa over HTTP on PostgreSQL and a real webhook receiver: the sessions list with its filters and keyset pages,
 * a session's timeline (created, bind, transfer, status change, webhook attempts), and who may read what.
 */

let chain: TestChain;
let node: ChainKassa;
let receiver: WebhookReceiver;
let loop: { stop(): Promise<void> };
let shopA: TestMerchant;
let shopB: TestMerchant;
let ownerA: DashboardMember;
let viewerA: DashboardMember;
let ownerB: DashboardMember;
const ids: Record<'paid' | 'euro' | 'small' | 'other', string> = { paid: '', euro: '', small: '', other: '' };
let paidTx: { hash: string; from: string; blockNumber: bigint };
let beforeSmall: Date;

const LIST = `query List($org: ID!, $filter: SessionFilterInput, $first: Int, $after: String) {
  sessions(organisationId: $org, filter: $filter, first: $first, after: $after) {
    nodes { id status fiatCurrency totalAmountFiat cryptoCurrency payerEmail payerId boundTxHash createdAt }
    nextCursor
  }
}`;

const STORY = `query Story($org: ID!, $id: ID!) {
  session(organisationId: $org, id: $id) {
    id status totalAmountFiat amountReceived payerEmail metadata
    items { name quantity unitPrice totalPrice }
    quotes { ticker amount unitPriceFiat rateSource }
    timeline {
      at kind fromStatus toStatus cause txHash network asset amount outcome reason blockNumber confirmations late
      attribution eventType endpointUrl attempt httpStatus deliveryId
    }
  }
}`;

beforeAll(async () => {
  chain = await startTestChain();
  node = await startChainKassa(chain.url, { env: FAST_WEBHOOKS });
  const { kassa } = node;
  shopA = await createMerchant(kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}`, name: 'Shop A' });
  shopB = await createMerchant(kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}`, name: 'Shop B' });
  receiver = await startWebhookReceiver();
  // The first delivery fails, the retry succeeds: both attempts are in the timeline.
  receiver.respond({ status: 500, body: 'down for a moment' });
  const endpoint = await signedRequest(kassa, shopA, 'post', '/webhook-endpoints', {
    url: receiver.url,
    events: ['checkout_session.created', 'checkout_session.paid'],
  });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
  loop = startDeliveryLoop(kassa.ctx);

  const paid = await createSession(
    kassa,
    shopA,
    checkoutRequest({ user: { id: 'cust-1', email: 'Alice@Example.com' }, metadata: { order: 'A-1' } }),
  );
  ids.paid = paid.session_id;
  const btc = (paid.crypto_options as Array<{ ticker: string; amount: string }>).find((o) => o.ticker === 'BTC')!;
  const sent = await chain.pay(shopA.wallet, 'BTC', btc.amount);
  paidTx = sent;
  const bound = await postBind(kassa, ids.paid, {
    tx_hash: sent.hash,
    chain_id: '31337',
    crypto_currency: 'BTC',
    payer_wallet_address: sent.from,
  });
  expect(bound.status, JSON.stringify(bound.body)).toBe(200);
  await node.watchers.tick();
  ids.euro = (
    await createSession(
      kassa,
      shopA,
      checkoutRequest({
        currency: 'EUR',
        user: { id: 'cust-2', email: 'bob@example.com' },
        metadata: { note: 'Gift 50%_off', quantity: 3 },
      }),
    )
  ).session_id;
  await new Promise((resolve) => setTimeout(resolve, 5));
  beforeSmall = new Date();
  ids.small = (
    await createSession(
      kassa,
      shopA,
      checkoutRequest({
        user: { id: 'cust-3', email: 'carl@example.com' },
        items: [{ name: 'Sticker', quantity: 1, unit_price: 5 }],
      }),
    )
  ).session_id;
  ids.other = (
    await createSession(kassa, shopB, checkoutRequest({ user: { id: 'cust-1', email: 'alice@example.com' } }))
  ).session_id;
  await receiver.waitFor((got) => got.some((hook) => hook.body.type === 'checkout_session.paid'));

  ownerA = await dashboardMember(kassa, shopA.organisationId, 'owner@shop-a.example', 'owner');
  viewerA = await dashboardMember(kassa, shopA.organisationId, 'viewer@shop-a.example', 'viewer');
  ownerB = await dashboardMember(kassa, shopB.organisationId, 'owner@shop-b.example', 'owner');
}, 120_000);

afterAll(async () => {
  await loop?.stop();
  await receiver?.close();
  await node?.close();
  await chain?.stop();
});

async function list(member: DashboardMember, org: string, filter: Record<string, unknown> = {}, first?: number) {
  const answer = await merchantGraphql(node.kassa, member, LIST, { org, filter, first });
  expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
  return answer.data!.sessions as { nodes: Array<Record<string, any>>; nextCursor: string | null };
}

const idsOf = (page: { nodes: Array<Record<string, any>> }) => page.nodes.map((node) => node.id);

describe('the sessions list', () => {
  it("lists the organisation's sessions newest first, and no other organisation's", async () => {
    const page = await list(viewerA, shopA.organisationId);
    expect(idsOf(page)).toEqual([ids.small, ids.euro, ids.paid]);
    expect(page.nextCursor).toBeNull();
    expect(page.nodes[2]).toMatchObject({
      status: 'PAID',
      fiatCurrency: 'USD',
      totalAmountFiat: '105.00000000',
      cryptoCurrency: 'BTC',
      payerEmail: 'Alice@Example.com',
      payerId: 'cust-1',
      boundTxHash: paidTx.hash.toLowerCase(),
    });
  });

  it('pages by keyset: every session once, in order, whatever the page size', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const answer = await merchantGraphql(node.kassa, ownerA, LIST, { org: shopA.organisationId, first: 2, after });
      expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
      const page = answer.data!.sessions as { nodes: Array<{ id: string }>; nextCursor: string | null };
      expect(page.nodes.length).toBeLessThanOrEqual(2);
      seen.push(...page.nodes.map((n) => n.id));
      after = page.nextCursor;
    } while (after);
    expect(seen).toEqual([ids.small, ids.euro, ids.paid]);
    const bad = await merchantGraphql(node.kassa, ownerA, LIST, { org: shopA.organisationId, after: 'nonsense' });
    expect(bad.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
  });

  it('filters by status, asset, network, dates, fiat range and currency, payer, transaction hash and link', async () => {
    const org = shopA.organisationId;
    expect(idsOf(await list(ownerA, org, { statuses: ['PAID'] }))).toEqual([ids.paid]);
    expect(idsOf(await list(ownerA, org, { statuses: ['WAITING_PAYMENT', 'EXPIRED'] }))).toEqual([ids.small, ids.euro]);
    expect(idsOf(await list(ownerA, org, { asset: 'BTC' }))).toEqual([ids.paid]);
    expect(idsOf(await list(ownerA, org, { asset: 'USDT' }))).toEqual([]);
    expect(idsOf(await list(ownerA, org, { network: 'local' }))).toEqual([ids.paid]);
    expect(idsOf(await list(ownerA, org, { createdFrom: beforeSmall.toISOString() }))).toEqual([ids.small]);
    expect(idsOf(await list(ownerA, org, { createdBefore: beforeSmall.toISOString() }))).toEqual([ids.euro, ids.paid]);
    expect(idsOf(await list(ownerA, org, { fiatMax: '5' }))).toEqual([ids.small]);
    expect(idsOf(await list(ownerA, org, { fiatMin: '5.00000001', fiatCurrency: 'usd' }))).toEqual([ids.paid]);
    expect(idsOf(await list(ownerA, org, { fiatCurrency: 'EUR' }))).toEqual([ids.euro]);
    expect(idsOf(await list(ownerA, org, { payer: 'ALICE@example.com' }))).toEqual([ids.paid]);
    expect(idsOf(await list(ownerA, org, { payer: 'cust-2' }))).toEqual([ids.euro]);
    expect(idsOf(await list(ownerA, org, { txHash: paidTx.hash.toUpperCase().replace('0X', '0x') }))).toEqual([
      ids.paid,
    ]);
    expect(idsOf(await list(ownerA, org, { paymentLinkId: randomUUID() }))).toEqual([]);
    // Combined: all must hold.
    expect(idsOf(await list(ownerA, org, { payer: 'alice@example.com', statuses: ['WAITING_PAYMENT'] }))).toEqual([]);
  });

  it('filters by payer wallet (any case) and by metadata, as text or key=value', async () => {
    const org = shopA.organisationId;
    expect(idsOf(await list(ownerA, org, { payerWallet: paidTx.from.toUpperCase().replace('0X', '0x') }))).toEqual([
      ids.paid,
    ]);
    expect(idsOf(await list(ownerA, org, { payerWallet: `0x${'ab'.repeat(20)}` }))).toEqual([]);
    expect(idsOf(await list(ownerB, shopB.organisationId, { payerWallet: paidTx.from }))).toEqual([]);
    expect(idsOf(await list(ownerA, org, { metadata: 'order=A-1' }))).toEqual([ids.paid]);
    expect(idsOf(await list(ownerA, org, { metadata: 'order=A-2' }))).toEqual([]);
    expect(idsOf(await list(ownerA, org, { metadata: 'quantity=3' }))).toEqual([ids.euro]);
    expect(idsOf(await list(ownerA, org, { metadata: 'gift 50%_OFF' }))).toEqual([ids.euro]);
    // % and _ are the text itself, not wildcards.
    expect(idsOf(await list(ownerA, org, { metadata: 'gift 5%off' }))).toEqual([]);
    expect(idsOf(await list(ownerA, org, { metadata: 'a-1' }))).toEqual([ids.paid]);
    // The URL's names, as the pages and the export take them.
    const csv = await dashboardRequest(
      node.kassa.url,
      'GET',
      `/dashboard/api/organisations/${org}/sessions.csv?wallet=${paidTx.from}&meta=order%3DA-1`,
      { cookie: ownerA.cookie },
    );
    expect(csv.status, csv.text).toBe(200);
    expect(
      csv.text
        .trimEnd()
        .split('\r\n')
        .slice(1)
        .map((line) => line.split(',')[0]),
    ).toEqual([ids.paid]);
    const bad = await merchantGraphql(node.kassa, ownerA, LIST, { org, filter: { payerWallet: '0x12' } });
    expect(bad.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      messages: ['payerWallet must be 0x and 40 hex digits'],
    });
  });

  it('filters by status as reads show it: open past expiry with nothing bound is expired', async () => {
    const org = shopA.organisationId;
    const prisma = node.kassa.runtime.db.prisma;
    const { expiresAt } = await prisma.checkoutSession.findUniqueOrThrow({ where: { id: ids.small } });
    await prisma.checkoutSession.update({ where: { id: ids.small }, data: { expiresAt: new Date(Date.now() - 1000) } });
    try {
      expect(idsOf(await list(ownerA, org, { statuses: ['EXPIRED'] }))).toEqual([ids.small]);
      expect(idsOf(await list(ownerA, org, { statuses: ['WAITING_PAYMENT'] }))).toEqual([ids.euro]);
      expect(idsOf(await list(ownerA, org, { statuses: ['EXPIRED', 'PAID'] }))).toEqual([ids.small, ids.paid]);
    } finally {
      await prisma.checkoutSession.update({ where: { id: ids.small }, data: { expiresAt } });
    }
  });

  it('refuses a malformed filter with every problem', async () => {
    const answer = await merchantGraphql(node.kassa, ownerA, LIST, {
      org: shopA.organisationId,
      filter: { txHash: '0x12', network: 'mars', fiatMin: '10', fiatMax: '1' },
    });
    expect(answer.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      messages: ['txHash must be 0x and 64 hex digits', 'network must be one of local', 'fiatMin is above fiatMax'],
    });
  });
});

describe("a session's story", () => {
  it('shows items, quotes and one timeline: created, bind, transfer, status change, webhook attempts', async () => {
    const answer = await merchantGraphql(node.kassa, viewerA, STORY, { org: shopA.organisationId, id: ids.paid });
    expect(answer.errors).toBeUndefined();
    const story = answer.data!.session as Record<string, any>;
    expect(story).toMatchObject({
      id: ids.paid,
      status: 'PAID',
      payerEmail: 'Alice@Example.com',
      metadata: '{"order":"A-1"}',
      items: [
        { name: 'Coffee beans', quantity: 2, unitPrice: '12.50000000', totalPrice: '25.00000000' },
        { name: 'Grinder', quantity: 1, unitPrice: '80.00000000', totalPrice: '80.00000000' },
      ],
    });
    expect(story.quotes.map((q: { ticker: string }) => q.ticker)).toContain('BTC');
    const timeline = story.timeline as Array<Record<string, any>>;
    expect(timeline[0]).toMatchObject({ kind: 'CREATED' });
    const times = timeline.map((entry) => Date.parse(entry.at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    const hash = paidTx.hash.toLowerCase();
    expect(timeline.find((e) => e.kind === 'BIND')).toMatchObject({
      txHash: hash,
      network: 'local',
      asset: 'BTC',
      outcome: 'verified',
      reason: null,
    });
    expect(timeline.find((e) => e.kind === 'TRANSFER')).toMatchObject({
      txHash: hash,
      network: 'local',
      asset: 'BTC',
      outcome: 'confirmed',
      blockNumber: paidTx.blockNumber.toString(),
      late: false,
      attribution: 'bound_tx',
    });
    expect(timeline.filter((e) => e.kind === 'STATUS_CHANGED').at(-1)).toMatchObject({ toStatus: 'paid' });
    const attempts = timeline.filter((e) => e.kind === 'WEBHOOK_ATTEMPT');
    expect(attempts).toContainEqual(
      expect.objectContaining({ eventType: 'checkout_session.created', attempt: 1, httpStatus: 500 }),
    );
    expect(attempts).toContainEqual(
      expect.objectContaining({ eventType: 'checkout_session.created', attempt: 2, httpStatus: 200 }),
    );
    expect(attempts.every((e) => e.endpointUrl === receiver.url)).toBe(true);
  });

  it("another organisation's session is not found, by its id or through the other's organisation", async () => {
    const other = await merchantGraphql(node.kassa, ownerA, STORY, { org: shopA.organisationId, id: ids.other });
    expect(other.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    expect(other.data).toBeNull();
    const viaB = await merchantGraphql(node.kassa, ownerA, STORY, { org: shopB.organisationId, id: ids.other });
    expect(viaB.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    const listB = await merchantGraphql(node.kassa, ownerA, LIST, { org: shopB.organisationId });
    expect(listB.errors?.[0]).toMatchObject({
      message: `Organisation ${shopB.organisationId} not found`,
      extensions: { code: 'NOT_FOUND' },
    });
    // B's owner sees B's session, and A's payer filter never reaches it.
    expect(idsOf(await list(ownerB, shopB.organisationId))).toEqual([ids.other]);
    expect(idsOf(await list(ownerA, shopA.organisationId, { payer: 'cust-1' }))).toEqual([ids.paid]);
  });
});

describe('redelivering a webhook', () => {
  const REDELIVER = `mutation($org: ID!, $delivery: ID!) {
    redeliverWebhook(organisationId: $org, deliveryId: $delivery) { deliveryId eventType }
  }`;

  async function createdDelivery(): Promise<string> {
    const story = await merchantGraphql(node.kassa, ownerA, STORY, { org: shopA.organisationId, id: ids.paid });
    const attempts = (story.data!.session.timeline as Array<Record<string, any>>).filter(
      (entry) => entry.kind === 'WEBHOOK_ATTEMPT' && entry.eventType === 'checkout_session.created',
    );
    expect(new Set(attempts.map((entry) => entry.deliveryId)).size).toBe(1);
    return attempts[0]!.deliveryId as string;
  }

  it('support and up send a delivery again, written to the audit log; a viewer may not', async () => {
    const delivery = await createdDelivery();
    const refused = await merchantGraphql(node.kassa, viewerA, REDELIVER, { org: shopA.organisationId, delivery });
    expect(refused.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    expect(refused.errors?.[0]?.message).toContain('ask an organisation support');

    const support = await dashboardMember(node.kassa, shopA.organisationId, 'support@shop-a.example', 'support');
    const before = receiver.received.filter((hook) => hook.body.data.session_id === ids.paid).length;
    const sent = await merchantGraphql(node.kassa, support, REDELIVER, { org: shopA.organisationId, delivery });
    expect(sent.errors).toBeUndefined();
    expect(sent.data).toEqual({ redeliverWebhook: { deliveryId: delivery, eventType: 'checkout_session.created' } });
    await receiver.waitFor((got) => got.filter((hook) => hook.body.data.session_id === ids.paid).length > before);
    const audit = await dashboardRequest(
      node.kassa.url,
      'GET',
      `/dashboard/api/organisations/${shopA.organisationId}/audit-log`,
      { cookie: ownerA.cookie },
    );
    expect(audit.json<Array<Record<string, unknown>>>()[0]).toMatchObject({
      action: 'webhook.redelivered',
      user_email: 'support@shop-a.example',
      details: { delivery_id: delivery, event_type: 'checkout_session.created' },
    });
  });

  it("another organisation's owner cannot redeliver it, even naming their own organisation", async () => {
    const delivery = await createdDelivery();
    for (const org of [shopA.organisationId, shopB.organisationId]) {
      const answer = await merchantGraphql(node.kassa, ownerB, REDELIVER, { org, delivery });
      expect(answer.errors?.[0]?.extensions.code, org).toBe('NOT_FOUND');
    }
  });
});

describe('the merchant API is apart from the public one', () => {
  it('refuses a caller without a session (401), without the CSRF token or from another site (403)', async () => {
    const body = { query: LIST, variables: { org: shopA.organisationId } };
    const anonymous = await dashboardRequest(node.kassa.url, 'POST', '/dashboard/graphql', { json: body });
    expect(anonymous.status).toBe(401);
    const noToken = await dashboardRequest(node.kassa.url, 'POST', '/dashboard/graphql', {
      cookie: ownerA.cookie,
      json: body,
    });
    expect(noToken.status).toBe(403);
    const crossSite = await dashboardRequest(node.kassa.url, 'POST', '/dashboard/graphql', {
      cookie: ownerA.cookie,
      json: body,
      headers: { 'X-CSRF-Token': ownerA.csrf, Origin: 'https://evil.example' },
    });
    expect(crossSite.status).toBe(403);
    const get = await dashboardRequest(node.kassa.url, 'GET', '/dashboard/graphql', { cookie: ownerA.cookie });
    expect(get.status).toBe(405);
  });

  it("the public /graphql has none of the merchant schema's fields or types", async () => {
    const response = await node.kassa.http
      .post('/graphql')
      .set('Content-Type', 'application/json')
      .set('Cookie', ownerA.cookie)
      .send({ query: `{ sessions(organisationId: "${shopA.organisationId}") { nodes { id payerEmail } } }` });
    expect(response.status).toBe(400);
    expect(response.body.errors[0].message).toContain('Cannot query field "sessions" on type "Query"');
    const story = await node.kassa.http
      .post('/graphql')
      .set('Content-Type', 'application/json')
      .send({ query: `{ checkoutSession(id: "${ids.paid}") { id timeline { kind } payerEmail } }` });
    expect(story.status).toBe(400);
  });

  it('viewer, the least role, reads sessions; who is signed in is asked without an organisation', async () => {
    const viewer = await merchantGraphql(node.kassa, viewerA, '{ viewer { email organisations { id role } } }');
    expect(viewer.data).toEqual({
      viewer: { email: 'viewer@shop-a.example', organisations: [{ id: shopA.organisationId, role: 'viewer' }] },
    });
  });
});
