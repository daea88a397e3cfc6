import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/config.js';
import {
  itemRows,
  networkRows,
  quoteRows,
  ROW_COLUMNS_FILLED_BY_SQL,
  sessionRow,
} from '../../src/db/sessions/create-session.store.js';
import type { CheckoutSession } from '../../src/domain/sessions/checkout-session.js';
import { Decimal } from '../../src/domain/shared/money.js';
import { getDmmf } from '../support/schema-dmmf.js';
import { expectedShape } from '../support/schema-shape.js';

/**
 * Issue 10: create is one hand-written statement (kassa_create_checkout_session, migration
 * 20261123140000_hot_paths) fed with rows keyed by column name. Prisma checks none of it, so
 * this test holds it to prisma/schema.prisma: the rows carry exactly the model's columns,
 * and every column the hot-path SQL names exists, with every required column supplied.
 * (test/integration/schema-agreement.test.ts holds schema.prisma to the migrated database.)
 */

const schema = expectedShape(getDmmf(readFileSync(path.join(PACKAGE_ROOT, 'prisma/schema.prisma'), 'utf8')));
// The function as first written and as each later migration replaced it: all are held.
const hotPaths = [
  '20261123140000_hot_paths',
  '20261126200000_create_hinted_amounts',
  '20261128100000_create_in_batches',
  '20261129110000_create_refuses_taken_amounts',
  '20261130100000_claims_taken_at_kassa_clock',
]
  .map((name) => readFileSync(path.join(PACKAGE_ROOT, `prisma/migrations/${name}/migration.sql`), 'utf8'))
  .join('\n');

const columnsOf = (table: string) => Object.keys(schema.tables[table] ?? {}).sort();
const required = (table: string) =>
  Object.entries(schema.tables[table] ?? {})
    .filter(([, column]) => !column.nullable && column.default === null)
    .map(([name]) => name);

const session: CheckoutSession = {
  id: '00000000-0000-4000-8000-000000000001',
  organisationId: '00000000-0000-4000-8000-000000000002',
  organisationName: 'Shop',
  organisationDeleted: false,
  ownerUserId: null,
  status: 'waiting_payment',
  source: 'api',
  fromPaymentLink: false,
  anonymous: false,
  requiresPayerIdentity: false,
  identityOptions: [],
  productPaymentLinkId: null,
  fiatCurrency: 'EUR',
  totalAmountFiat: new Decimal('10'),
  cryptoCurrency: null,
  totalAmountCrypto: null,
  networks: [{ network: 'local', chainId: '31337', walletAddress: '0xabc' }],
  quotes: [
    {
      ticker: 'USDT',
      assetId: 'tether',
      unitPriceFiat: new Decimal('0.9'),
      amount: new Decimal('11.111112'),
      baseAmount: new Decimal('11.111112'),
      amountStep: new Decimal('0.000001'),
      offsetSteps: 0,
      rateSource: 'static',
      ratedAt: new Date(0),
      rounding: 'ceil',
    },
  ],
  items: [{ name: 'Tea', quantity: 1, unitPrice: new Decimal('10'), totalPrice: new Decimal('10'), productId: null }],
  expiresAt: new Date(0),
  overpaid: false,
  boundTxHash: null,
  boundAt: null,
  boundTxCheckedAt: null,
  payerWalletAddress: null,
  chainId: null,
  failureReason: null,
  amountReceived: new Decimal(0),
  amountReceivedLate: new Decimal(0),
  restAmount: null,
  amountPending: new Decimal(0),
  quotedAt: new Date(0),
  paymentPolicy: { underpaymentTolerancePercent: new Decimal(0), latePaymentWindowMinutes: 60 },
  user: { id: 'u1', email: null, telegramId: null, username: null },
  metadata: {},
  createdAt: new Date(0),
  updatedAt: new Date(0),
};

describe('the rows create writes', () => {
  it.each([
    ['checkout_sessions', [sessionRow(session)]],
    ['checkout_session_items', itemRows(session)],
    ['checkout_session_quotes', quoteRows(session)],
    ['checkout_session_networks', networkRows(session)],
  ] as const)('%s: exactly the columns of schema.prisma, with those the statement fills in', (table, rows) => {
    expect(columnsOf(table).length).toBeGreaterThan(3);
    const filled: readonly string[] = ROW_COLUMNS_FILLED_BY_SQL[table];
    for (const row of rows) expect([...Object.keys(row), ...filled].sort()).toEqual(columnsOf(table));
    for (const column of filled) expect(hotPaths).toContain(`'${column}'`);
  });

  it('a quote whose rounding rule is not the shared one names its own', () => {
    const odd = { ...session, quotes: [session.quotes[0]!, { ...session.quotes[0]!, rounding: 'floor' }] };
    expect(quoteRows(odd).map((row) => row.rounding)).toEqual([undefined, 'floor']);
  });
});

describe('the hot-path SQL of migration 20261123140000_hot_paths', () => {
  const inserts = [...hotPaths.matchAll(/INSERT INTO "(\w+)" \(([^)]*)\)/g)].map((match) => ({
    table: match[1]!,
    columns: [...match[2]!.matchAll(/"(\w+)"/g)].map((column) => column[1]!),
  }));

  it('names its tables', () => {
    expect([...new Set(inserts.map((insert) => insert.table))].sort()).toEqual(
      [
        'checkout_session_status_history',
        'idempotency_keys',
        'kassa_change_log',
        'outbox_events',
        'payment_amount_claims',
        'request_signatures',
      ].sort(),
    );
  });

  it.each([
    'checkout_session_status_history',
    'idempotency_keys',
    'kassa_change_log',
    'outbox_events',
    'payment_amount_claims',
    'request_signatures',
  ])('INSERT INTO %s names only its columns and every required one', (table) => {
    for (const insert of inserts.filter((candidate) => candidate.table === table)) {
      for (const column of insert.columns) expect(columnsOf(table)).toContain(column);
      for (const column of required(table)) expect(insert.columns).toContain(column);
    }
  });

  it('every qualified column it reads exists (t."amount", k."request_hash", …)', () => {
    const aliases: Record<string, string> = {
      c: 'payment_amount_claims',
      t: 'payment_amount_claims',
      k: 'idempotency_keys',
    };
    const references = [...hotPaths.matchAll(/\b([ctk])\."(\w+)"/g)];
    expect(references.length).toBeGreaterThan(3);
    for (const [, alias, column] of references) expect(columnsOf(aliases[alias!]!)).toContain(column);
    for (const [, column] of hotPaths.matchAll(/UPDATE "payment_links" SET "(\w+)"/g))
      expect(columnsOf('payment_links')).toContain(column);
    // DELETE FROM "table" WHERE "column" = … AND …;
    for (const [, table, where] of hotPaths.matchAll(/DELETE FROM "(\w+)"\s+WHERE ([^;]*);/g))
      for (const [, column] of where!.matchAll(/"(\w+)"\s*=/g)) expect(columnsOf(table!)).toContain(column);
  });
});
