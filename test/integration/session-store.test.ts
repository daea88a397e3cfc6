import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutRequest, txHash } from '../factories/checkout-request.js';
import { createMerchant } from '../factories/merchant.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createSession } from '../support/rest-kassa.js';

/** The session writes of src/db/tx-store.ts (raw SQL through Prisma) against a real PostgreSQL. */
let kassa: TestKassa;
beforeAll(async () => {
  kassa = await startTestKassa();
});
afterAll(() => kassa?.close());

describe('updateSession', () => {
  it('writes exactly the fields given, amounts exact; two sessions may name one bound transaction', async () => {
    const merchant = await createMerchant(kassa.ctx);
    const first = (await createSession(kassa, merchant, checkoutRequest())).session_id as string;
    const second = (await createSession(kassa, merchant, checkoutRequest())).session_id as string;
    const hash = txHash(7);
    const at = new Date('2026-11-25T10:00:00.123Z');
    const { Decimal } = await import('../../src/domain/shared/money.js');
    await kassa.ctx.store.transaction((tx) =>
      tx.updateSession(first, {
        boundTxHash: hash,
        amountReceived: new Decimal('0.000000000000000001'),
        status: 'partial',
        paymentsChangedAt: null,
        updatedAt: at,
      }),
    );
    const row = await kassa.runtime.db.prisma.checkoutSession.findUniqueOrThrow({ where: { id: first } });
    expect([
      row.boundTxHash,
      row.amountReceived.toFixed(),
      row.status,
      row.paymentsChangedAt,
      row.updatedAt.toISOString(),
    ]).toEqual([hash, '0.000000000000000001', 'partial', null, at.toISOString()]);
    // One transaction may pay several sessions, a transfer each (a batch: docs/payment-rules.md, rule 3): both name it.
    await kassa.ctx.store.transaction((tx) => tx.updateSession(second, { boundTxHash: hash, updatedAt: at }));
    const both = await kassa.runtime.db.prisma.checkoutSession.findMany({ where: { boundTxHash: hash } });
    expect(both.map((session) => session.id).sort()).toEqual([first, second].sort());
  });
});
