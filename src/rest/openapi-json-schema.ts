import { z } from 'zod';

/**
 * zod → the OpenAPI document's JSON Schema (`z.toJSONSchema`), taught our custom pieces and tidied to the subset the
 * document uses.
 */

export type Json = Record<string, unknown>;

const TARGET = 'draft-2020-12';

type ZodDef = { type: string; in?: z.ZodType; out?: z.ZodType; keyType?: z.ZodType; valueType?: z.ZodType };
const defOf = (schema: unknown): ZodDef => (schema as { _zod: { def: ZodDef } })._zod.def;

/**
 * Request bodies guard objects and arrays with a custom check before the real schema (for the messages): the document
 * shows the real schema. A free-form record is a plain object; custom numbers carry their JSON Schema as `.meta`.
 */
function override(ctx: { zodSchema: unknown; jsonSchema: Json }): void {
  const def = defOf(ctx.zodSchema);
  const replace = (value: Json) => {
    const { description, title, default: fallback } = ctx.jsonSchema;
    for (const key of Object.keys(ctx.jsonSchema)) delete ctx.jsonSchema[key];
    Object.assign(ctx.jsonSchema, value, dropUndefined({ title, description, default: fallback }));
  };
  // zod drops a `default` given as metadata on a transforming schema; the document keeps it.
  const meta = z.globalRegistry.get(ctx.zodSchema as z.ZodType);
  if (meta?.default !== undefined && ctx.jsonSchema.default === undefined) ctx.jsonSchema.default = meta.default;
  if (def.type === 'pipe' && defOf(def.in).type === 'custom' && ['object', 'array'].includes(defOf(def.out).type)) {
    replace(jsonSchemaOf(def.out!));
  } else if (def.type === 'record' && defOf(def.valueType).type === 'unknown') {
    replace({ type: 'object' });
  }
}

/** A request schema (what is sent: `io: 'input'`) or a standalone response schema (`'output'`). */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output' = 'input'): Json {
  const options = { target: TARGET, io, unrepresentable: 'any', override: override as never } as const;
  return tidy(z.toJSONSchema(schema, options) as Json) as Json;
}

/** The named schemas of a registry, with `$ref`s between them to `#/components/schemas/<id>`. */
export function componentSchemasOf(registry: z.core.$ZodRegistry<{ id: string }>): Record<string, Json> {
  const uri = (id: string) => `#/components/schemas/${id}`;
  const options = { target: TARGET, io: 'output', uri, override: override as never } as const;
  const { schemas } = z.toJSONSchema(registry, options) as { schemas: Record<string, Json> };
  return Object.fromEntries(Object.entries(schemas).map(([id, schema]) => [id, tidy(schema) as Json]));
}

const SAFE_INTEGER_BOUNDS = new Set([Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]);

/**
 * Removes what only zod needs (`$schema`, `$id`, the patterns beside `format: uuid` and `date-time`, `z.int()`'s ±2^53
 * bounds); unions become `oneOf`, since ours are disjoint.
 */
function tidy(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(tidy);
  if (schema === null || typeof schema !== 'object') return schema;
  const node = schema as Json;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$schema' || key === '$id') continue;
    if (key === 'pattern' && ['uuid', 'date-time'].includes(node.format as string)) continue;
    if ((key === 'minimum' || key === 'maximum') && SAFE_INTEGER_BOUNDS.has(value as number)) continue;
    if (key === 'properties') {
      out[key] = Object.fromEntries(Object.entries(value as Json).map(([name, property]) => [name, tidy(property)]));
    } else {
      out[key === 'anyOf' ? 'oneOf' : key] = tidy(value);
    }
  }
  return out;
}

const dropUndefined = (value: Json): Json =>
  Object.fromEntries(Object.entries(value).filter(([, inner]) => inner !== undefined));
