import { Decimal } from 'decimal.js';
import type { DmmfDatamodel, DmmfField, DmmfModel } from './schema-dmmf.js';

/**
 * One neutral shape for "what the database looks like", built twice: from
 * schema.prisma (what `prisma migrate` would create) and from pg_catalog (what
 * the migrations did create). The schema test compares the two.
 */
export interface ColumnShape {
  /** As PostgreSQL's format_type() spells it: `text`, `timestamp(3) with time zone`, `numeric(38,8)`, `text[]`. */
  readonly type: string;
  readonly nullable: boolean;
  /** Canonical default (see canonicalDefault), or null for none. */
  readonly default: string | null;
}

export interface IndexShape {
  readonly table: string;
  readonly kind: 'primary key' | 'unique' | 'index';
  readonly columns: readonly string[];
  /** Per column: 'asc' or 'desc'. */
  readonly order: readonly string[];
  readonly method: string;
}

export interface ForeignKeyShape {
  readonly table: string;
  readonly columns: readonly string[];
  readonly references: string;
  readonly referencedColumns: readonly string[];
  readonly onDelete: string;
  readonly onUpdate: string;
}

export interface DatabaseShape {
  /** table → column → shape */
  readonly tables: Record<string, Record<string, ColumnShape>>;
  /** index or constraint name → shape */
  readonly indexes: Record<string, IndexShape>;
  /** constraint name → shape */
  readonly foreignKeys: Record<string, ForeignKeyShape>;
  /** enum type → values in order */
  readonly enums: Record<string, readonly string[]>;
}

// PostgreSQL truncates identifiers to 63 bytes; Prisma's default names are cut the same way.
const MAX_IDENTIFIER = 63;

/** PostgreSQL quotes an identifier in format_type() unless it is a plain lower-case name. */
export function quoteIdent(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

/** Prisma's default constraint names (`prisma migrate` naming convention). */
export function defaultConstraintName(
  table: string,
  columns: readonly string[],
  suffix: 'pkey' | 'key' | 'idx' | 'fkey',
): string {
  const name = suffix === 'pkey' ? `${table}_pkey` : `${table}_${columns.join('_')}_${suffix}`;
  if (name.length > MAX_IDENTIFIER) {
    throw new Error(
      `default name ${name} is longer than 63 characters: give it an explicit map: in schema.prisma (or teach schema-shape.ts Prisma's truncation)`,
    );
  }
  return name;
}

const unsupported = (what: string): never => {
  throw new Error(
    `${what} is not handled by test/support/schema-shape.ts yet: extend it so the schema test keeps covering every column`,
  );
};

// Prisma's PostgreSQL types for scalars without @db.* (prisma/docs: "PostgreSQL type mapping").
const SCALAR_DEFAULT_TYPES: Record<string, string> = {
  String: 'text',
  Int: 'integer',
  BigInt: 'bigint',
  Boolean: 'boolean',
  Float: 'double precision',
  Decimal: 'numeric(65,30)',
  DateTime: 'timestamp(3) without time zone',
  Json: 'jsonb',
  Bytes: 'bytea',
};

const precision = (args: readonly string[], base: string, suffix = '') =>
  args.length ? `${base}(${args.join(',')})${suffix}` : `${base}${suffix}`;

// @db.* native types as format_type() prints them.
const NATIVE_TYPES: Record<string, (args: readonly string[]) => string> = {
  Text: () => 'text',
  Uuid: () => 'uuid',
  VarChar: (args) => precision(args, 'character varying'),
  Char: (args) => precision(args, 'character'),
  Integer: () => 'integer',
  SmallInt: () => 'smallint',
  BigInt: () => 'bigint',
  Boolean: () => 'boolean',
  Real: () => 'real',
  DoublePrecision: () => 'double precision',
  Decimal: (args) => (args.length ? `numeric(${args.join(',')})` : unsupported('@db.Decimal without precision')),
  Money: () => 'money',
  Timestamptz: (args) => precision(args, 'timestamp', ' with time zone'),
  Timestamp: (args) => precision(args, 'timestamp', ' without time zone'),
  Date: () => 'date',
  Time: (args) => precision(args, 'time', ' without time zone'),
  Timetz: (args) => precision(args, 'time', ' with time zone'),
  Json: () => 'json',
  JsonB: () => 'jsonb',
  ByteA: () => 'bytea',
  Inet: () => 'inet',
  Citext: () => 'citext',
};

function columnName(field: DmmfField): string {
  return field.dbName ?? field.name;
}

function tableName(model: DmmfModel): string {
  if (model.schema) unsupported(`multi-schema model ${model.name}`);
  return model.dbName ?? model.name;
}

/**
 * Canonical defaults, so `DEFAULT 0`, `'0'::integer` and Prisma's `@default(0)`
 * all read `number 0`, and a string default reads the same whatever its cast.
 */
export function canonicalDefault(expression: string | null): string | null {
  if (expression === null) return null;
  const trimmed = expression.trim();
  if (trimmed === 'CURRENT_TIMESTAMP' || trimmed === 'now()') return 'now()';
  if (trimmed === 'true' || trimmed === 'false') return `bool ${trimmed}`;
  const number = /^\(?'?(-?\d+(?:\.\d+)?)'?\)?(?:::(?:integer|bigint|smallint|numeric|double precision|real))?$/.exec(
    trimmed,
  );
  if (number) return `number ${new Decimal(number[1]!).toString()}`;
  const nextval = /^nextval\('(.+)'::regclass\)$/.exec(trimmed);
  if (nextval) return `sequence ${nextval[1]}`;
  const emptyArray = /^ARRAY\[\]::(.+)$/.exec(trimmed);
  if (emptyArray) return `empty array ${emptyArray[1]}`;
  const literal = /^'((?:[^']|'')*)'::[\w\s"$.]+(?:\(\d+(?:,\d+)?\))?$/.exec(trimmed);
  if (literal) return `literal ${JSON.stringify(literal[1]!.replace(/''/g, "'"))}`;
  return `expression ${trimmed}`;
}

function expectedDefault(model: DmmfModel, field: DmmfField, type: string, datamodel: DmmfDatamodel): string | null {
  if (!field.hasDefaultValue) return null;
  const value = field.default;
  const table = tableName(model);
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'name' in value) {
    const fn = value as { name: string; args: unknown[] };
    switch (fn.name) {
      case 'now':
        return 'now()';
      case 'autoincrement':
        // SERIAL/BIGSERIAL: PostgreSQL names the sequence <table>_<column>_seq.
        return `sequence ${table}_${columnName(field)}_seq`;
      case 'uuid':
      case 'cuid':
      case 'nanoid':
      case 'ulid':
        return null; // generated by Prisma Client, not by the database
      case 'dbgenerated':
        return fn.args.length ? canonicalDefault(String(fn.args[0])) : null;
      default:
        return unsupported(`@default(${fn.name}()) on ${model.name}.${field.name}`);
    }
  }
  if (field.isList) {
    if (Array.isArray(value) && value.length === 0) return `empty array ${type}`;
    return unsupported(`non-empty list default on ${model.name}.${field.name}`);
  }
  if (field.kind === 'enum') {
    const enumDef = datamodel.enums.find((e) => e.name === field.type)!;
    const member = enumDef.values.find((v) => v.name === value);
    return `literal ${JSON.stringify(member?.dbName ?? String(value))}`;
  }
  switch (field.type) {
    case 'Boolean':
      return `bool ${String(value)}`;
    case 'Int':
    case 'BigInt':
    case 'Float':
    case 'Decimal':
      return `number ${new Decimal(String(value)).toString()}`;
    case 'String':
    case 'Json':
      return `literal ${JSON.stringify(String(value))}`;
    default:
      return unsupported(`@default on ${field.type} field ${model.name}.${field.name}`);
  }
}

function sqlType(model: DmmfModel, field: DmmfField, datamodel: DmmfDatamodel): string {
  let base: string;
  if (field.kind === 'enum') {
    const enumDef = datamodel.enums.find((e) => e.name === field.type)!;
    base = quoteIdent(enumDef.dbName ?? enumDef.name);
  } else if (field.kind === 'scalar') {
    if (field.nativeType) {
      const [name, args] = field.nativeType;
      const render = NATIVE_TYPES[name] ?? unsupported(`@db.${name} on ${model.name}.${field.name}`);
      base = render(args);
    } else {
      base =
        SCALAR_DEFAULT_TYPES[field.type] ?? unsupported(`scalar type ${field.type} on ${model.name}.${field.name}`);
    }
  } else {
    return unsupported(`field kind ${field.kind} on ${model.name}.${field.name}`);
  }
  return field.isList ? `${base}[]` : base;
}

/** The database `prisma migrate` would create for this datamodel (PostgreSQL). */
export function expectedShape(datamodel: DmmfDatamodel): DatabaseShape {
  const tables: DatabaseShape['tables'] = {};
  const indexes: Record<string, IndexShape> = {};
  const foreignKeys: Record<string, ForeignKeyShape> = {};
  const enums: Record<string, readonly string[]> = {};
  const modelByName = new Map(datamodel.models.map((m) => [m.name, m]));
  const column = (model: DmmfModel, fieldName: string) => columnName(model.fields.find((f) => f.name === fieldName)!);

  for (const enumDef of datamodel.enums) {
    enums[enumDef.dbName ?? enumDef.name] = enumDef.values.map((v) => v.dbName ?? v.name);
  }

  for (const model of datamodel.models) {
    const table = tableName(model);
    const columns: Record<string, ColumnShape> = {};
    for (const field of model.fields) {
      if (field.kind === 'object') continue;
      const type = sqlType(model, field, datamodel);
      columns[columnName(field)] = {
        type,
        // Prisma creates scalar lists as nullable columns even when the field is required
        // (prisma/orm#13880); everything else is NOT NULL unless the field is optional.
        nullable: field.isList ? true : !field.isRequired,
        default: expectedDefault(model, field, type, datamodel),
      };
    }
    tables[table] = columns;

    for (const field of model.fields) {
      if (field.kind !== 'object' || !field.relationFromFields?.length) continue;
      const target = modelByName.get(field.type)!;
      const columnsFrom = field.relationFromFields.map((name) => column(model, name));
      const allRequired = field.relationFromFields.every(
        (name) => model.fields.find((f) => f.name === name)!.isRequired,
      );
      foreignKeys[defaultConstraintName(table, columnsFrom, 'fkey')] = {
        table,
        columns: columnsFrom,
        references: tableName(target),
        referencedColumns: field.relationToFields!.map((name) => column(target, name)),
        // Prisma's referential action defaults: Restrict for a required relation, SetNull for an optional one; Cascade on update.
        onDelete: field.relationOnDelete ?? (allRequired ? 'Restrict' : 'SetNull'),
        onUpdate: field.relationOnUpdate ?? 'Cascade',
      };
    }
  }

  for (const index of datamodel.indexes) {
    const model = modelByName.get(index.model)!;
    const table = tableName(model);
    if (index.type === 'fulltext') unsupported(`@@fulltext on ${index.model}`);
    const columns = index.fields.map((f) => {
      if (f.length !== undefined || f.operatorClass !== undefined)
        unsupported(`index length/ops on ${index.model}.${f.name}`);
      return column(model, f.name);
    });
    const kind = index.type === 'id' ? 'primary key' : index.type === 'unique' ? 'unique' : 'index';
    const suffix = index.type === 'id' ? 'pkey' : index.type === 'unique' ? 'key' : 'idx';
    indexes[index.dbName ?? defaultConstraintName(table, columns, suffix)] = {
      table,
      kind,
      columns,
      order: index.fields.map((f) => f.sortOrder ?? 'asc'),
      method: (index.algorithm ?? 'BTree').toLowerCase(),
    };
  }

  return { tables, indexes, foreignKeys, enums };
}
