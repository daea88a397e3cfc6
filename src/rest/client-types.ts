import type { Json } from './openapi-json-schema.js';

/**
 * The client's TypeScript types (clients/typescript/src/types.ts), rendered from the OpenAPI document; only the JSON
 * Schema it uses is understood, anything else fails loudly rather than become a silently wrong type.
 */

const HEADER = `// Generated from Kassa's OpenAPI document (GET /openapi.json) by \`npm run client:types\`
// (src/rest/client-types.ts). Do not edit: change the zod schemas in src/ and run it again.
`;

/** Keywords that say nothing about the TypeScript type (validation and documentation only). */
const IGNORED = new Set([
  'description',
  'title',
  'default',
  'format',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'maxProperties',
  'required',
  'additionalProperties',
]);
const UNDERSTOOD = new Set([...IGNORED, '$ref', 'enum', 'const', 'type', 'properties', 'items', 'oneOf', 'anyOf']);

export function renderClientTypes(document: Json): string {
  const declarations: string[] = [];
  const schemas = ((document.components as Json | undefined)?.schemas ?? {}) as Record<string, Json>;
  for (const [name, schema] of Object.entries(schemas)) {
    declarations.push(declaration(name, schema, `components.schemas.${name}`));
  }
  for (const [name, schema] of requestBodies(document)) {
    declarations.push(declaration(name, schema, `request body ${name}`));
  }
  return `${HEADER}\n${declarations.join('\n\n')}\n`;
}

/** Every titled JSON request body, in document order; a body without a title has no name to give its type. */
function requestBodies(document: Json): Array<[string, Json]> {
  const found: Array<[string, Json]> = [];
  for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, Json>>)) {
    for (const [method, operation] of Object.entries(operations)) {
      const body = operation.requestBody as { content: Record<string, { schema: Json }> } | undefined;
      const schema = body?.content['application/json']?.schema;
      if (!schema) continue;
      if (typeof schema.title !== 'string') {
        throw new Error(`${method.toUpperCase()} ${path}: the request body has no title`);
      }
      found.push([schema.title, schema]);
    }
  }
  return found;
}

function declaration(name: string, schema: Json, where: string): string {
  assertUnderstood(schema, where);
  const doc = comment(schema, '');
  const isInterface = schema.type === 'object' && schema.properties !== undefined && !schema.oneOf && !schema.anyOf;
  if (isInterface) return `${doc}export interface ${name} ${objectType(schema, '', where)}`;
  return `${doc}export type ${name} =${typeOf(schema, '', where).replace(/^(?!\n)/, ' ')};`;
}

function assertUnderstood(schema: Json, where: string): void {
  for (const key of Object.keys(schema)) {
    if (!UNDERSTOOD.has(key)) throw new Error(`${where}: JSON Schema keyword ${key} is not supported`);
  }
}

function typeOf(schema: Json, indent: string, where: string): string {
  assertUnderstood(schema, where);
  if (typeof schema.$ref === 'string') return schema.$ref.replace(/^#\/components\/schemas\//, '');
  const union = (schema.oneOf ?? schema.anyOf) as Json[] | undefined;
  if (union)
    return unionOf(
      union.map((option, index) => typeOf(option, indent, `${where}.oneOf.${index}`)),
      indent,
    );
  if (Array.isArray(schema.enum)) return unionOf(schema.enum.map(literal), indent);
  if ('const' in schema) return literal(schema.const);
  if (schema.type === undefined) return 'unknown';
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  return unionOf(
    types.map((type) => simpleType(type, schema, indent, where)),
    indent,
  );
}

/** `a | b`, or one member a line when that would be long. */
function unionOf(members: string[], indent: string): string {
  const line = members.join(' | ');
  if (members.length < 2 || line.length + indent.length <= 80 || line.includes('\n')) return line;
  return members.map((member) => `\n${indent}  | ${member}`).join('');
}

function simpleType(type: string, schema: Json, indent: string, where: string): string {
  switch (type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      const item = schema.items ? typeOf(schema.items as Json, indent, `${where}.items`) : 'unknown';
      if (/^[\w.]+$/.test(item)) return `${item}[]`;
      return item.startsWith('\n') ? `Array<${item}\n${indent}>` : `Array<${item}>`;
    }
    case 'object': {
      if (schema.properties) return objectType(schema, indent, where);
      const values = schema.additionalProperties;
      const typed = values && typeof values === 'object' && Object.keys(values).length > 0;
      return `Record<string, ${typed ? typeOf(values as Json, indent, where) : 'unknown'}>`;
    }
    default:
      throw new Error(`${where}: type ${type} is not supported`);
  }
}

function objectType(schema: Json, indent: string, where: string): string {
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const inner = `${indent}  `;
  const lines = Object.entries(schema.properties as Record<string, Json>).map(([name, property]) => {
    const key = /^[A-Za-z_$][\w$]*$/.test(name) ? name : literal(name);
    const optional = required.has(name) ? '' : '?';
    return `${comment(property, inner)}${inner}${key}${optional}: ${typeOf(property, inner, `${where}.${name}`)};`;
  });
  return `{\n${lines.join('\n')}\n${indent}}`;
}

/** The schema's description (and default) as a JSDoc comment, or nothing. */
function comment(schema: Json, indent: string): string {
  const description = typeof schema.description === 'string' ? schema.description.replace(/([^.!?])$/, '$1.') : '';
  const told = schema.default === undefined || /\bdefault\b/i.test(description);
  const text = told ? description : `${description} Default: ${JSON.stringify(schema.default)}.`.trim();
  return text ? `${indent}/** ${text.replace(/\*\//g, '*\\/')} */\n` : '';
}

const literal = (value: unknown): string =>
  typeof value === 'string' ? `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : JSON.stringify(value);
