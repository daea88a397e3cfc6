import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import {
  dashboardMember,
  dashboardRequest,
  merchantGraphql,
  type DashboardMember,
} from '../support/dashboard-client.js';
import { signedRequest } from '../support/webhooks.js';
import { paidSession, randomWallet, refundRows, type PaidSession } from '../support/refunds.js';

/**
 * Refunds on the merchant GraphQL API (docs/api/refunds.md#graphql) on a real anvil and PostgreSQL: the same refund
 * as REST, roles (manage_refunds: admin and owner), the session's refunds and timeline, refusals writing nothing.
 */

let chain: TestChain;
let node: ChainKassa;
let paid: PaidSession;
let stranger: TestMerchant;
const members: Record<'owner' | 'admin' | 'developer' | 'viewer' | 'stranger', DashboardMember> = {} as never;

const FIELDS = `id sessionId kind basis status network chainId cryptoCurrency tokenAddress amount baseUnits fiatCurrency
  amountFiat unitPriceFiat destination destinationSource proofAddress claimUrl claimExpiresAt txHash blockNumber
  confirmations failureReason note createdAt updatedAt`;

const CREATE = `mutation Create($org: ID!, $session: ID!, $input: CreateRefundInput!) {
  createRefund(organisationId: $org, sessionId: $session, input: $input) { ${FIELDS} }
}`;
const CANCEL = `mutation Cancel($org: ID!, $id: ID!) { cancelRefund(organisationId: $org, id: $id) { id status } }`;
const ONE = `query One($org: ID!, $id: ID!) { refund(organisationId: $org, id: $id) { ${FIELDS} } }`;
const LIST = `query List($org: ID!, $session: ID!) { refunds(organisationId: $org, sessionId: $session) { id status } }`;
const STORY = `query Story($org: ID!, $id: ID!) {
  session(organisationId: $org, id: $id) {
    refunds { id status amount }
    timeline { kind fromStatus toStatus cause asset amount refundId }
  }
}`;

beforeAll(async () => {
  chain = await startTestChain();
  node = await startChainKassa(chain.url);
  paid = await paidSession(chain, node, 'USDT');
  stranger = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
  const org = paid.merchant.organisationId;
  for (const role of ['owner', 'admin', 'developer', 'viewer'] as const)
    members[role] = await dashboardMember(node.kassa, org, `${role}@refunds.example`, role);
  members.stranger = await dashboardMember(node.kassa, stranger.organisationId, 'owner@other.example', 'owner');
}, 120_000);

afterAll(async () => {
  await node?.close();
  await chain?.stop();
});

/** The REST view's fields in camelCase, as the merchant schema shows them (enums upper-case). */
function asGraphql(view: Record<string, any>) {
  const upper = (value: string | null) => value?.toUpperCase() ?? null;
  return {
    id: view.id,
    sessionId: view.session_id,
    kind: upper(view.kind),
    basis: upper(view.basis),
    status: upper(view.status),
    network: view.network,
    chainId: view.chain_id,
    cryptoCurrency: view.crypto_currency,
    tokenAddress: view.token_address,
    amount: view.amount,
    baseUnits: view.base_units,
    fiatCurrency: view.fiat_currency,
    amountFiat: view.amount_fiat,
    unitPriceFiat: view.unit_price_fiat,
    destination: view.destination,
    destinationSource: upper(view.destination_source),
    proofAddress: view.proof_address,
    claimUrl: view.claim_url,
    claimExpiresAt: view.claim_expires_at,
    txHash: view.tx_hash,
    blockNumber: view.block_number,
    confirmations: view.confirmations,
    failureReason: view.failure_reason,
    note: view.note,
    createdAt: view.created_at,
    updatedAt: view.updated_at,
  };
}

describe('refunds on the merchant GraphQL API', () => {
  it('an admin creates one that REST shows the same; the session shows it and its timeline entry', async () => {
    const org = paid.merchant.organisationId;
    const answer = await merchantGraphql(node.kassa, members.admin, CREATE, {
      org,
      session: paid.id,
      input: { kind: 'PART', amount: '3', note: 'returned item' },
    });
    expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
    const created = answer.data!.createRefund;
    const rest = await signedRequest(node.kassa, paid.merchant, 'get', `/refunds/${created.id}`);
    expect(created).toEqual(asGraphql(rest.body));
    expect(created).toMatchObject({ status: 'AWAITING_DESTINATION', amount: '3.00000000', note: 'returned item' });

    const viewer = await merchantGraphql(node.kassa, members.viewer, ONE, { org, id: created.id });
    expect(viewer.data!.refund).toEqual(created);
    const story = await merchantGraphql(node.kassa, members.viewer, STORY, { org, id: paid.id });
    expect(story.errors, JSON.stringify(story.errors)).toBeUndefined();
    expect(story.data!.session.refunds).toEqual([
      { id: created.id, status: 'AWAITING_DESTINATION', amount: '3.00000000' },
    ]);
    expect(story.data!.session.timeline.filter((entry: any) => entry.kind === 'REFUND')).toEqual([
      {
        kind: 'REFUND',
        fromStatus: null,
        toStatus: 'awaiting_destination',
        cause: 'created',
        asset: 'USDT',
        amount: '3.00000000',
        refundId: created.id,
      },
    ]);

    const cancelled = await merchantGraphql(node.kassa, members.owner, CANCEL, { org, id: created.id });
    expect(cancelled.data!.cancelRefund).toEqual({ id: created.id, status: 'CANCELLED' });
    const list = await merchantGraphql(node.kassa, members.viewer, LIST, { org, session: paid.id });
    expect(list.data!.refunds).toEqual([{ id: created.id, status: 'CANCELLED' }]);
    const audit = await node.kassa.runtime.db.prisma.dashboardAuditEntry.findMany({
      where: { organisationId: org, action: { startsWith: 'refund.' } },
      orderBy: { id: 'asc' },
    });
    expect(audit.map((entry) => entry.action)).toEqual(['refund.created', 'refund.cancelled']);
  });

  it('refuses a role below admin, a stranger, and bad input, writing nothing', async () => {
    const org = paid.merchant.organisationId;
    const before = await refundRows(node.kassa, org);
    const cases: Array<[DashboardMember, string, Record<string, unknown>, string, string?]> = [
      [members.developer, CREATE, { org, session: paid.id, input: { kind: 'FULL' } }, 'FORBIDDEN'],
      [members.viewer, CREATE, { org, session: paid.id, input: { kind: 'FULL' } }, 'FORBIDDEN'],
      [members.stranger, CREATE, { org, session: paid.id, input: { kind: 'FULL' } }, 'NOT_FOUND'],
      [
        members.stranger,
        CREATE,
        { org: stranger.organisationId, session: paid.id, input: { kind: 'FULL' } },
        'NOT_FOUND',
        'not_found',
      ],
      [
        members.admin,
        CREATE,
        { org, session: paid.id, input: { kind: 'PART' } },
        'BAD_USER_INPUT',
        'validation_failed',
      ],
      [
        members.admin,
        CREATE,
        { org, session: paid.id, input: { kind: 'FULL', destination: '0xabc' } },
        'BAD_USER_INPUT',
        'validation_failed',
      ],
      [
        members.admin,
        CREATE,
        { org, session: paid.id, input: { kind: 'PART', amount: '100000' } },
        'CONFLICT',
        'refund_exceeds_received',
      ],
      [members.admin, CREATE, { org, session: randomUUID(), input: { kind: 'FULL' } }, 'NOT_FOUND', 'not_found'],
    ];
    for (const [member, query, variables, code, reason] of cases) {
      const answer = await merchantGraphql(node.kassa, member, query, variables);
      expect(answer.errors?.[0]?.extensions.code, JSON.stringify(answer)).toBe(code);
      if (reason) expect((answer.errors![0]!.extensions as Record<string, unknown>).reason).toBe(reason);
      expect(await refundRows(node.kassa, org)).toEqual(before);
    }
    const created = await merchantGraphql(node.kassa, members.owner, CREATE, {
      org,
      session: paid.id,
      input: { kind: 'FULL', destination: randomWallet() },
    });
    expect(created.errors, JSON.stringify(created.errors)).toBeUndefined();
    const foreign = await merchantGraphql(node.kassa, members.stranger, ONE, {
      org: stranger.organisationId,
      id: created.data!.createRefund.id,
    });
    expect(foreign.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
  });
});

describe("the dashboard's refund routes (the Refund button)", () => {
  const post = (member: DashboardMember, path: string, json: unknown) =>
    dashboardRequest(node.kassa.url, 'POST', path, {
      cookie: member.cookie,
      json,
      headers: { 'X-CSRF-Token': member.csrf },
    });

  it(
    'refuse a role below admin and a stranger, writing nothing; an admin creates and a viewer reads',
    {
      timeout: 60_000,
    },
    async () => {
      const org = paid.merchant.organisationId;
      const fresh = await paidSession(chain, node, 'USDT', '0', paid.merchant);
      const path = `/dashboard/api/organisations/${org}/sessions/${fresh.id}/refunds`;
      const before = await refundRows(node.kassa, org);
      const form = { kind: 'part', amount: '0.5', destination: randomWallet() };
      for (const [member, status] of [
        [members.viewer, 403],
        [members.developer, 403],
        [members.stranger, 404],
      ] as const) {
        const refused = await post(member, path, form);
        expect(refused.status, refused.text).toBe(status);
        expect(await refundRows(node.kassa, org)).toEqual(before);
      }
      const made = await post(members.admin, path, form);
      expect(made.status, made.text).toBe(201);
      const id = made.json<{ id: string }>().id;
      const read = await dashboardRequest(node.kassa.url, 'GET', path, { cookie: members.viewer.cookie });
      expect(read.status, read.text).toBe(200);
      expect(read.json<{ data: Array<{ id: string }> }>().data.map((refund) => refund.id)).toContain(id);
      const sent = `/dashboard/api/organisations/${org}/refunds/${id}/sent`;
      const report = await post(members.viewer, sent, { tx_hash: `0x${'ab'.repeat(32)}` });
      expect(report.status, report.text).toBe(403);
      const foreign = await dashboardRequest(node.kassa.url, 'GET', path, { cookie: members.stranger.cookie });
      expect(foreign.status, foreign.text).toBe(404);
      await merchantGraphql(node.kassa, members.admin, CANCEL, { org, id });
    },
  );
});
