import { afterAll, beforeAll, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/shared/money.js';
import type { ChainTransfer } from '../../src/domain/payments/payment-ports.js';
import { checkoutRequest, txHash } from '../factories/checkout-request.js';
import { createMerchant } from '../factories/merchant.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createSession } from '../support/rest-kassa.js';

/**
 * The order in which a credit takes its locks (src/db/payments/payment-credits.ts: recordTransfer), on a real database: the
 * scan and a bind crediting one transfer to one session, on two instances, both take the session's row before they
 * write the transfer's (a bind locks its session first), so neither waits for the other in a cycle. Written the other
 * way round, the scan held the transfer's row while it waited for the session the bind held, the bind then waited for
 * the transfer's row, and PostgreSQL broke the deadlock by failing one: a bind answered 500 (found by CI, in
 * payment-trust's "scan and bind racing on two instances").
 */
let kassa: TestKassa;
beforeAll(async () => {
  kassa = await startTestKassa();
});
afterAll(() => kassa?.close());

it(
  'a scan crediting a transfer waits for a bind that holds its session before it writes the transfer',
  { timeout: 20_000 },
  async () => {
    const merchant = await createMerchant(kassa.ctx);
    const session = await createSession(kassa, merchant, checkoutRequest());
    const usdt = session.crypto_options.find((o: { ticker: string }) => o.ticker === 'USDT').amount as string;
    const now = new Date();
    const transfer: ChainTransfer = {
      network: 'local',
      chainId: '31337',
      txHash: txHash(Date.now() % 1_000_000),
      logIndex: 0,
      from: `0x${'1'.repeat(40)}`,
      to: merchant.wallet.toLowerCase(),
      asset: 'USDT',
      tokenAddress: `0x${'2'.repeat(40)}`,
      baseUnits: BigInt(new Decimal(usdt).times(1e6).toFixed(0)),
      amount: new Decimal(usdt),
      blockNumber: 1n,
      blockHash: txHash(1),
      blockTime: now,
    };
    const { prisma } = kassa.runtime.db;
    const waitingForLocks = async () =>
      (
        await prisma.$queryRaw<Array<{ n: number }>>`
          SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock'`
      )[0]!.n;

    // The bind: its session locked first (as bindTransaction does), the transfer credited once the scan is waiting.
    let bindHolds!: () => void;
    const held = new Promise<void>((resolve) => (bindHolds = resolve));
    let goOn!: () => void;
    const mayGoOn = new Promise<void>((resolve) => (goOn = resolve));
    const bind = kassa.ctx.store.transaction(async (tx) => {
      await tx.lockSession(session.session_id);
      bindHolds();
      await mayGoOn;
      return tx.creditTransfers([transfer], [{ sessionId: session.session_id, attribution: 'bound_tx' }], now);
    });
    await held;
    // The scan of another instance, crediting the same transfer by its exact amount.
    const scan = kassa.ctx.store.transaction((tx) =>
      tx.creditTransfers([transfer], [{ sessionId: session.session_id, attribution: 'exact_amount' }], now),
    );
    await expect.poll(waitingForLocks, { timeout: 5_000, interval: 20 }).toBe(1);
    goOn();
    const outcomes = await Promise.allSettled([bind, scan]);
    expect(outcomes.map((outcome) => (outcome.status === 'rejected' ? String(outcome.reason) : 'done'))).toEqual([
      'done',
      'done',
    ]);
    const rows = await prisma.payment.findMany({ where: { txHash: transfer.txHash, live: true } });
    expect(rows.map((row) => [row.sessionId, row.attribution])).toEqual([[session.session_id, 'bound_tx']]);
  },
);
