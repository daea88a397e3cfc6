import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/shared/errors.js';
import {
  cancelRefund,
  confirmRefund,
  expireDueRefunds,
  failRefund,
  recordMined,
  recordSent,
  revertToSent,
  submitDestination,
} from '../../src/domain/refunds/refund-transitions.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { controllableClock } from '../support/rest-kassa.js';
import {
  paidSession,
  postRefund,
  randomWallet,
  refundEvents,
  refundHistory,
  type PaidSession,
} from '../support/refunds.js';

/**
 * The refund's states (docs/api/refunds.md#states) through the domain functions the claim page and the chain watcher
 * call, on a real PostgreSQL with sessions paid on anvil: each change one history row and one event, claims used once
 * and expiring, the expiry job run by two instances at once.
 */

const MIN = 60_000;
const TX = `0x${'ab'.repeat(32)}`;
const BLOCK = `0x${'cd'.repeat(32)}`;

let chain: TestChain;
let node: ChainKassa;
let second: TestKassa;
const time = controllableClock();

beforeAll(async () => {
  chain = await startTestChain();
  node = await startChainKassa(chain.url, { clock: time.clock });
  second = await startTestKassa({
    database: node.kassa.database,
    clock: time.clock,
    env: { KASSA_NETWORKS: 'local', KASSA_RPC_URLS_LOCAL: chain.url },
  });
}, 60_000);

afterAll(async () => {
  await second?.close();
  await node?.close();
  await chain?.stop();
});

afterEach(() => time.release());

const ctx = () => node.kassa.ctx;

async function refund(paid: PaidSession, body: Record<string, unknown>): Promise<Record<string, any>> {
  const response = await postRefund(node.kassa, paid.merchant, paid.id, body);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}

async function refusal(work: Promise<unknown>): Promise<{ code: string; reason: string; message: string }> {
  const error = await work.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(DomainError);
  const { code, reason, message } = error as DomainError;
  return { code, reason, message };
}

const types = async (sessionId: string) => (await refundEvents(node.kassa, sessionId)).map((event) => event.type);

describe('claim links', () => {
  it('take one address: awaiting_destination → ready, refund.destination_submitted, then claim_used', async () => {
    const paid = await paidSession(chain, node);
    const created = await refund(paid, { kind: 'full' });
    const destination = randomWallet();
    const ready = await submitDestination(ctx(), created.id, { address: destination, source: 'claim' });
    expect(ready).toMatchObject({ status: 'ready', destination, destinationSource: 'claim', proof: null });
    const again = await refusal(submitDestination(ctx(), created.id, { address: randomWallet(), source: 'claim' }));
    expect(again).toMatchObject({ code: 'conflict', reason: 'claim_used' });
    expect(await refundHistory(node.kassa, created.id)).toEqual([
      [null, 'awaiting_destination', 'created'],
      ['awaiting_destination', 'ready', 'claim'],
    ]);
    const events = await refundEvents(node.kassa, paid.id);
    expect(events.map((event) => event.type)).toEqual(['refund.created', 'refund.destination_submitted']);
    expect(events[1]!.data).toMatchObject({ status: 'ready', destination, destination_source: 'claim' });
  });

  it('record a signed destination with its proof, and refuse a malformed or own address writing nothing', async () => {
    const paid = await paidSession(chain, node);
    const created = await refund(paid, { kind: 'full' });
    const malformed = await refusal(submitDestination(ctx(), created.id, { address: '0xnope', source: 'claim' }));
    expect(malformed).toMatchObject({ code: 'invalid', reason: 'validation_failed' });
    const own = await refusal(submitDestination(ctx(), created.id, { address: paid.merchant.wallet, source: 'claim' }));
    expect(own).toMatchObject({ code: 'invalid', reason: 'destination_refused' });
    const unsigned = await refusal(
      submitDestination(ctx(), created.id, { address: randomWallet(), source: 'claim_signed' }),
    );
    expect(unsigned.code).toBe('invalid');
    expect(await types(paid.id)).toEqual(['refund.created']);

    const proof = { message: 'Refund to …', signature: `0x${'11'.repeat(65)}`, address: paid.payer };
    const ready = await submitDestination(ctx(), created.id, { address: paid.payer, source: 'claim_signed', proof });
    expect(ready).toMatchObject({ destinationSource: 'claim_signed', proof });
    const stored = await node.kassa.runtime.db.prisma.refund.findUniqueOrThrow({ where: { id: created.id } });
    expect(stored).toMatchObject({ proofAddress: paid.payer, proofSignature: proof.signature });
  });

  it('expire unused: the job (two instances at once) moves each once to expired; a late claim is claim_expired', async () => {
    const paid = await paidSession(chain, node);
    const made = [];
    for (let index = 0; index < 3; index += 1)
      made.push(await refund(paid, { kind: 'part', amount: '1', claim_expires_in_minutes: 5 }));
    const kept = await refund(paid, { kind: 'part', amount: '1', claim_expires_in_minutes: 60 });
    time.freeze(Date.now() + 6 * MIN);
    const counts = await Promise.all([expireDueRefunds(ctx(), 2), expireDueRefunds(second.ctx, 2)]);
    const rest = await expireDueRefunds(ctx());
    expect(counts[0] + counts[1] + rest).toBeGreaterThanOrEqual(3);
    for (const { id } of made) {
      expect(await refundHistory(node.kassa, id)).toEqual([
        [null, 'awaiting_destination', 'created'],
        ['awaiting_destination', 'expired', 'claim link expired'],
      ]);
    }
    const events = await types(paid.id);
    expect(events.filter((type) => type === 'refund.expired')).toHaveLength(3);
    const late = await refusal(submitDestination(ctx(), made[0]!.id, { address: randomWallet(), source: 'claim' }));
    expect(late).toMatchObject({ code: 'gone', reason: 'claim_expired' });
    const still = await node.kassa.runtime.db.prisma.refund.findUniqueOrThrow({ where: { id: kept.id } });
    expect(still.status).toBe('awaiting_destination');
    // A claim past its time is refused before the job has run.
    time.freeze(Date.now() + 61 * MIN);
    const due = await refusal(submitDestination(ctx(), kept.id, { address: randomWallet(), source: 'claim' }));
    expect(due).toMatchObject({ code: 'gone', reason: 'claim_expired' });
  });
});

describe('the transfer', () => {
  it('ready → sent → confirmed, back to sent on a reorganisation, confirmed again; each change once', async () => {
    const paid = await paidSession(chain, node);
    const created = await refund(paid, { kind: 'full', destination: randomWallet() });
    const early = await refusal(confirmRefund(ctx(), created.id, 1));
    expect(early).toMatchObject({ code: 'conflict', reason: 'refund_state' });

    const sent = await recordSent(ctx(), created.id, { txHash: TX.toUpperCase().replace('0X', '0x') });
    expect(sent).toMatchObject({ status: 'sent', transfer: { txHash: TX } });
    expect(await recordSent(ctx(), created.id, { txHash: TX })).toMatchObject({ status: 'sent' });
    const other = await refusal(recordSent(ctx(), created.id, { txHash: `0x${'ef'.repeat(32)}` }));
    expect(other.reason).toBe('refund_state');

    const mined = { txHash: TX, sentFrom: paid.merchant.wallet, blockNumber: 7n, blockHash: BLOCK, logIndex: 0 };
    await recordMined(ctx(), created.id, { ...mined, minedAt: new Date(), confirmations: 0 });
    const confirmed = await confirmRefund(ctx(), created.id, 1);
    expect(confirmed).toMatchObject({ status: 'confirmed', transfer: { blockNumber: 7n, confirmations: 1 } });
    const reverted = await revertToSent(ctx(), created.id);
    expect(reverted).toMatchObject({ status: 'sent', transfer: { txHash: TX, blockNumber: null, confirmedAt: null } });
    await recordMined(ctx(), created.id, { ...mined, blockNumber: 9n, minedAt: new Date(), confirmations: 1 });
    await confirmRefund(ctx(), created.id, 1);

    expect((await refundHistory(node.kassa, created.id)).map(([from, to]) => `${from}→${to}`)).toEqual([
      'null→ready',
      'ready→sent',
      'sent→confirmed',
      'confirmed→sent',
      'sent→confirmed',
    ]);
    expect(await types(paid.id)).toEqual([
      'refund.created',
      'refund.sent',
      'refund.confirmed',
      'refund.sent',
      'refund.confirmed',
    ]);
    const cancel = await refusal(cancelRefund(ctx(), paid.merchant.organisationId, created.id));
    expect(cancel).toMatchObject({ code: 'conflict', reason: 'refund_not_cancellable' });
  });

  it('a failed transfer frees its amount for another refund', async () => {
    const paid = await paidSession(chain, node);
    const created = await refund(paid, { kind: 'full', destination: randomWallet() });
    expect((await postRefund(node.kassa, paid.merchant, paid.id, { kind: 'full' })).status).toBe(409);
    await recordSent(ctx(), created.id, { txHash: TX });
    const failed = await failRefund(ctx(), created.id, 'reverted');
    expect(failed).toMatchObject({ status: 'failed', failureReason: 'reverted' });
    expect((await refundEvents(node.kassa, paid.id)).at(-1)).toMatchObject({
      type: 'refund.failed',
      data: { status: 'failed', failure_reason: 'reverted' },
    });
    expect((await postRefund(node.kassa, paid.merchant, paid.id, { kind: 'full' })).status).toBe(201);
  });
});
