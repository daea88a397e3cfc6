import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/config.js';
import { applyMigrations } from '../../src/db/migrate.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { getDmmf } from '../support/schema-dmmf.js';
import { introspectShape, type IntrospectedShape } from '../support/schema-introspect.js';
import { expectedShape } from '../support/schema-shape.js';

/**
 * docs/decisions/0001: migrations are hand-written SQL, so nothing but this test keeps
 * prisma/schema.prisma (what Prisma Client queries) and the migrated database
 * (what `kassa migrate` creates) in step. schema.prisma is read with Prisma's own
 * parser; the database with pg_catalog, on a database of this file's own.
 */

const SCHEMA_FILE = path.join(PACKAGE_ROOT, 'prisma/schema.prisma');
const schemaText = readFileSync(SCHEMA_FILE, 'utf8');
const datamodel = getDmmf(schemaText);
const expected = expectedShape(datamodel);

/** Indexes schema.prisma cannot state (on an expression, or a GIN operator class): kept in SQL only, named here. */
const SQL_ONLY_INDEXES = new Set([
  'checkout_sessions_metadata_idx',
  'checkout_sessions_organisation_id_payer_wallet_idx',
  'checkout_sessions_organisation_id_user_email_idx',
  'payments_from_address_idx',
  'checkout_session_transactions_payer_wallet_idx',
  'webhook_delivery_attempts_response_kept_idx',
]);

let database: TestDatabase;
let pool: pg.Pool;
let actual: IntrospectedShape;
let sqlOnlyFound: string[];

beforeAll(async () => {
  database = await createTestDatabase('postgres');
  pool = new pg.Pool({ connectionString: database.databaseUrl!, max: 2 });
  // The template was migrated from the same files at setup; nothing may be left to apply.
  expect((await applyMigrations(pool)).applied).toEqual([]);
  const introspected = await introspectShape(pool);
  sqlOnlyFound = Object.keys(introspected.indexes).filter((name) => SQL_ONLY_INDEXES.has(name));
  actual = {
    ...introspected,
    indexes: Object.fromEntries(Object.entries(introspected.indexes).filter(([name]) => !SQL_ONLY_INDEXES.has(name))),
  };
});

afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

describe('schema.prisma', () => {
  it("is read by Prisma's own parser", () => {
    expect(datamodel.models.length).toBeGreaterThan(5);
    expect(expected.tables.organisations?.id).toEqual({ type: 'uuid', nullable: false, default: null });
  });

  it('maps relations only through @relation without map: (the DMMF does not carry a foreign key map:)', () => {
    // If this fails, teach schema-shape.ts the explicit foreign key name instead of Prisma's default.
    expect(schemaText).not.toMatch(/@relation\([^)]*\bmap\s*:/);
  });
});

describe('schema.prisma and the migrated database agree', () => {
  it('every model has a table and every table a model', () => {
    expect(Object.keys(actual.tables).sort(), 'tables (- schema.prisma, + migrated database)').toEqual(
      Object.keys(expected.tables).sort(),
    );
  });

  describe.each(datamodel.models.map((model) => [model.name, model.dbName ?? model.name] as const))(
    'model %s ↔ table %s',
    (_model, table) => {
      it('has the same columns with the same types, nullability and defaults', () => {
        expect(actual.tables[table], `columns of ${table} (- schema.prisma, + migrated database)`).toEqual(
          expected.tables[table],
        );
      });

      it('has the same primary key, unique constraints and indexes, columns in order', () => {
        const of = (shape: IntrospectedShape | typeof expected) =>
          Object.fromEntries(Object.entries(shape.indexes).filter(([, index]) => index.table === table));
        expect(of(actual), `indexes of ${table} (- schema.prisma, + migrated database)`).toEqual(of(expected));
      });

      it('has the same foreign keys, with the same referential actions', () => {
        const of = (shape: IntrospectedShape | typeof expected) =>
          Object.fromEntries(Object.entries(shape.foreignKeys).filter(([, key]) => key.table === table));
        expect(of(actual), `foreign keys of ${table} (- schema.prisma, + migrated database)`).toEqual(of(expected));
      });
    },
  );

  it('has the same enums with the same values in order', () => {
    expect(actual.enums).toEqual(expected.enums);
  });

  it('has the indexes kept in SQL only, each of them', () => {
    expect(sqlOnlyFound.sort()).toEqual([...SQL_ONLY_INDEXES].sort());
  });

  it('has every index and foreign key of the schema and no others', () => {
    expect(Object.keys(actual.indexes).sort()).toEqual(Object.keys(expected.indexes).sort());
    expect(Object.keys(actual.foreignKeys).sort()).toEqual(Object.keys(expected.foreignKeys).sort());
  });

  it('has no constraints Prisma would not create (CHECK, EXCLUDE)', () => {
    expect(actual.otherConstraints).toEqual({});
  });
});

describe('the comparison notices a difference', () => {
  it('a field added to schema.prisma only', () => {
    const changed = schemaText.replace(/(model Organisation \{\n)/, '$1  schema_agreement_probe String?\n');
    expect(changed).not.toBe(schemaText);
    const shape = expectedShape(getDmmf(changed));
    expect(shape.tables.organisations).not.toEqual(actual.tables.organisations);
    expect(shape.tables.organisations!.schema_agreement_probe).toEqual({ type: 'text', nullable: true, default: null });
  });

  it('a column or index added to the database only', async () => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('ALTER TABLE organisations ADD COLUMN schema_agreement_probe text');
      await client.query('CREATE INDEX schema_agreement_probe_idx ON organisations (name)');
      const changed = await introspectShape(client);
      expect(changed.tables.organisations).not.toEqual(expected.tables.organisations);
      expect(Object.keys(changed.indexes).sort()).not.toEqual(Object.keys(expected.indexes).sort());
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
});
