import type pg from 'pg';
import { canonicalDefault, type DatabaseShape, type ForeignKeyShape, type IndexShape } from './schema-shape.js';

/** Prisma's bookkeeping table: not part of schema.prisma (test/integration/migrations.test.ts checks it). */
export const PRISMA_MIGRATIONS_TABLE = '_prisma_migrations';

const REFERENTIAL_ACTIONS: Record<string, string> = {
  a: 'NoAction',
  r: 'Restrict',
  c: 'Cascade',
  n: 'SetNull',
  d: 'SetDefault',
};

export interface IntrospectedShape extends DatabaseShape {
  /** CHECK, EXCLUDE and trigger constraints: Prisma creates none. */
  readonly otherConstraints: Record<string, string>;
}

/** What the database really holds in `schema`, read from pg_catalog, in the shape of schema-shape.ts. */
export async function introspectShape(
  db: pg.Pool | pg.PoolClient | pg.Client,
  schema = 'public',
): Promise<IntrospectedShape> {
  const tables: DatabaseShape['tables'] = {};
  const tableRows = await db.query<{ table: string }>(
    `SELECT c.relname::text AS table FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND c.relname <> $2`,
    [schema, PRISMA_MIGRATIONS_TABLE],
  );
  for (const { table } of tableRows.rows) tables[table] = {};

  const columns = await db.query<{
    table: string;
    column: string;
    type: string;
    nullable: boolean;
    default: string | null;
    identity: string;
    generated: string;
  }>(
    `SELECT c.relname::text AS table, a.attname::text AS column, format_type(a.atttypid, a.atttypmod) AS type,
            NOT a.attnotnull AS nullable, pg_get_expr(d.adbin, d.adrelid) AS default,
            a.attidentity::text AS identity, a.attgenerated::text AS generated
     FROM pg_attribute a
     JOIN pg_class c ON c.oid = a.attrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND c.relname <> $2 AND a.attnum > 0 AND NOT a.attisdropped`,
    [schema, PRISMA_MIGRATIONS_TABLE],
  );
  for (const row of columns.rows) {
    // Prisma never creates identity or generated columns: make them show up as a difference.
    const special = row.identity ? `identity ${row.identity}` : row.generated ? `generated ${row.default}` : null;
    tables[row.table]![row.column] = {
      type: row.type,
      nullable: row.nullable,
      default: special ?? canonicalDefault(row.default),
    };
  }

  const indexes: Record<string, IndexShape> = {};
  const indexRows = await db.query<{
    name: string;
    table: string;
    primary: boolean;
    unique: boolean;
    method: string;
    columns: string[];
    order: string[];
    expressions: boolean;
    partial: boolean;
    included: number;
  }>(
    `SELECT i.relname::text AS name, t.relname::text AS table, ix.indisprimary AS primary, ix.indisunique AS unique,
            am.amname::text AS method,
            ARRAY(SELECT a.attname::text FROM unnest(ix.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
                  JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
                  WHERE k.ord <= ix.indnkeyatts ORDER BY k.ord) AS columns,
            ARRAY(SELECT CASE WHEN o.opt & 1 = 1 THEN 'desc' ELSE 'asc' END
                  FROM unnest(ix.indoption::int2[]) WITH ORDINALITY o(opt, ord) ORDER BY o.ord) AS order,
            ix.indexprs IS NOT NULL AS expressions, ix.indpred IS NOT NULL AS partial,
            ix.indnatts - ix.indnkeyatts AS included
     FROM pg_index ix
     JOIN pg_class i ON i.oid = ix.indexrelid
     JOIN pg_class t ON t.oid = ix.indrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     JOIN pg_am am ON am.oid = i.relam
     WHERE n.nspname = $1 AND t.relname <> $2`,
    [schema, PRISMA_MIGRATIONS_TABLE],
  );
  for (const row of indexRows.rows) {
    const kind = row.primary ? 'primary key' : row.unique ? 'unique' : 'index';
    const extras = [
      row.expressions && 'on expressions',
      row.partial && 'partial',
      row.included > 0 && 'with INCLUDE',
    ].filter(Boolean);
    indexes[row.name] = {
      table: row.table,
      kind: (extras.length ? `${kind} ${extras.join(' ')}` : kind) as IndexShape['kind'],
      columns: row.columns,
      order: row.order,
      method: row.method,
    };
  }

  const foreignKeys: Record<string, ForeignKeyShape> = {};
  const otherConstraints: Record<string, string> = {};
  const constraintRows = await db.query<{
    name: string;
    kind: string;
    table: string;
    references: string | null;
    columns: string[];
    referenced_columns: string[];
    on_delete: string;
    on_update: string;
    definition: string;
  }>(
    `SELECT con.conname::text AS name, con.contype::text AS kind, t.relname::text AS table, r.relname::text AS references,
            ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(attnum, ord)
                  JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum ORDER BY k.ord) AS columns,
            ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(attnum, ord)
                  JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum ORDER BY k.ord) AS referenced_columns,
            con.confdeltype::text AS on_delete, con.confupdtype::text AS on_update,
            pg_get_constraintdef(con.oid) AS definition
     FROM pg_constraint con
     JOIN pg_class t ON t.oid = con.conrelid
     LEFT JOIN pg_class r ON r.oid = con.confrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE n.nspname = $1 AND t.relname <> $2`,
    [schema, PRISMA_MIGRATIONS_TABLE],
  );
  for (const row of constraintRows.rows) {
    if (row.kind === 'f') {
      foreignKeys[row.name] = {
        table: row.table,
        columns: row.columns,
        references: row.references!,
        referencedColumns: row.referenced_columns,
        onDelete: REFERENTIAL_ACTIONS[row.on_delete] ?? row.on_delete,
        onUpdate: REFERENTIAL_ACTIONS[row.on_update] ?? row.on_update,
      };
    } else if (row.kind !== 'p' && row.kind !== 'u') {
      // Primary keys and unique constraints are compared through their indexes.
      otherConstraints[row.name] = `${row.table}: ${row.definition}`;
    }
  }

  const enums: Record<string, readonly string[]> = {};
  const enumRows = await db.query<{ name: string; values: string[] }>(
    `SELECT t.typname::text AS name, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS values
     FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid JOIN pg_namespace n ON n.oid = t.typnamespace
     WHERE n.nspname = $1 GROUP BY t.typname`,
    [schema],
  );
  for (const row of enumRows.rows) enums[row.name] = row.values;

  return { tables, indexes, foreignKeys, enums, otherConstraints };
}
