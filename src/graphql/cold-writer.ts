import {
  Kind,
  isEnumType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  isSpecifiedScalarType,
  type GraphQLLeafType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type SelectionSetNode,
} from 'graphql';
import { getMetadataStorage } from 'type-graphql';
import type { ViewFields } from './views.js';

/**
 * The cold lane's writers (src/graphql/cold-queries.ts, docs/decisions/0031): a selection compiled once into a function
 * that makes each field asked from a view and writes the answer's JSON text as graphql-js and Apollo would.
 */

/** A value graphql-js would not complete without an error: the request goes on to Apollo. */
export const BAIL = Symbol('bail');

export const NOTHING_RESOLVED: Readonly<Record<string, unknown>> = {};

/** A field's value completed as graphql-js completes a value of its type, written as JSON text; or BAIL. */
type Completer = (value: unknown) => string | typeof BAIL;
/**
 * An object's selected fields from its source, completed and written as JSON text, or BAIL; `resolved` holds its field
 * resolvers' values. Given `parts`, the text before each time field goes there, and the rest is answered.
 */
export type ObjectWriter<S> = (
  source: S,
  resolved?: Readonly<Record<string, unknown>>,
  parts?: string[],
) => string | typeof BAIL;

/**
 * Each object type's fields that a resolver of their own answers (type-graphql's field resolvers), and those read
 * under another name or through middleware: the lane never reads these from a view.
 */
export function fieldsWithResolvers(): ReadonlyMap<string, ReadonlySet<string>> {
  const storage = getMetadataStorage();
  const byType = new Map<string, Set<string>>();
  const add = (type: string, field: string) => {
    let fields = byType.get(type);
    if (fields === undefined) byType.set(type, (fields = new Set()));
    fields.add(field);
  };
  for (const objectType of storage.objectTypes) {
    for (const resolver of storage.fieldResolvers) {
      const target = resolver.getObjectType?.();
      // A resolver whose type is not known yet is taken to be this type's: the lane then leaves it to Apollo.
      if (target === undefined || target === objectType.target) add(objectType.name, resolver.schemaName);
    }
    for (const field of objectType.fields ?? [])
      if (field.name !== field.schemaName || field.middlewares?.length || field.roles?.length)
        add(objectType.name, field.schemaName);
  }
  return byType;
}

/** The field resolvers a root writer is given the values of, and the field whose value its caller writes in. */
interface RootOptions {
  readonly ownResolvers: ReadonlySet<string>;
  readonly timeField: string;
}

/**
 * Writes `selectionSet` of `type` as graphql-js completes it and JSON.stringify writes it, each field by its maker in
 * `fields` (src/graphql/views.ts) or as the source's own property; undefined for a field it cannot make so.
 */
export function compileObject<S>(
  type: GraphQLObjectType,
  selectionSet: SelectionSetNode,
  resolvedFields: ReadonlyMap<string, ReadonlySet<string>>,
  fields?: ViewFields<S>,
  root?: RootOptions,
): ObjectWriter<S> | undefined {
  const definitions = type.getFields();
  const withResolvers = resolvedFields.get(type.name);
  const keys: string[] = [];
  /** Each field's key as JSON writes it, after the comma or brace before it. */
  const prefixes: string[] = [];
  const timed: boolean[] = [];
  const writers: Array<(source: S, resolved: Readonly<Record<string, unknown>>) => string | typeof BAIL> = [];
  for (const selection of selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) return undefined;
    const name = selection.name.value;
    const key = selection.alias?.value ?? name;
    if (keys.includes(key)) return undefined;
    prefixes.push(`${keys.length === 0 ? '{' : ','}${JSON.stringify(key)}:`);
    keys.push(key);
    timed.push(name === root?.timeField);
    if (name === '__typename') {
      const text = JSON.stringify(type.name);
      writers.push(() => text);
      continue;
    }
    const definition = definitions[name];
    if (definition === undefined) return undefined;
    if (withResolvers?.has(name)) {
      if (!root?.ownResolvers.has(name)) return undefined;
      const complete = compileType(definition.type, selection.selectionSet, resolvedFields);
      if (complete === undefined) return undefined;
      writers.push((_source, resolved) => (name in resolved ? complete(resolved[name]) : BAIL));
      continue;
    }
    const make = fields?.get(name);
    if (fields !== undefined && make === undefined) return undefined;
    // A list of views of their own: made from their sources, only the fields asked.
    const items = make?.items;
    const complete = compileType(definition.type, selection.selectionSet, resolvedFields, items?.fields);
    if (complete === undefined) return undefined;
    const read = items
      ? (source: S) => items.sources(source)
      : make
        ? (source: S) => make(source)
        : (source: S) => {
            const value = (source as Record<string, unknown>)[name];
            return Object.hasOwn(source as object, name) && typeof value !== 'function' ? value : BAIL;
          };
    writers.push((source) => {
      const value = read(source);
      return value === BAIL ? BAIL : complete(value);
    });
  }
  if (keys.length === 0) return undefined;
  return (source, resolved = NOTHING_RESOLVED, parts) => {
    let text = '';
    for (let i = 0; i < writers.length; i++) {
      const value = writers[i]!(source, resolved);
      if (value === BAIL) return BAIL;
      text += prefixes[i]!;
      if (parts !== undefined && timed[i]) {
        parts[parts.length - 1] += text;
        parts.push('');
        text = '';
      } else text += value;
    }
    return `${text}}`;
  };
}

/** Completes a value of `type` as graphql-js does (non-null, lists, each leaf's `serialize`, objects), or BAIL. */
function compileType(
  type: GraphQLOutputType,
  selectionSet: SelectionSetNode | undefined,
  resolvedFields: ReadonlyMap<string, ReadonlySet<string>>,
  fields?: ViewFields<unknown>,
): Completer | undefined {
  if (isNonNullType(type)) {
    const inner = compileType(type.ofType, selectionSet, resolvedFields, fields);
    // Null where the type forbids it is an error in graphql-js: Apollo answers.
    return inner && ((value) => (value === null || value === undefined ? BAIL : inner(value)));
  }
  let complete: Completer | undefined;
  if (isListType(type)) {
    const item = compileType(type.ofType, selectionSet, resolvedFields, fields);
    if (item === undefined) return undefined;
    complete = (value) => {
      if (!Array.isArray(value)) return BAIL;
      let text = '[';
      for (let i = 0; i < value.length; i++) {
        const completed = item(value[i]);
        if (completed === BAIL) return BAIL;
        text += i === 0 ? completed : `,${completed}`;
      }
      return `${text}]`;
    };
  } else if (isLeafType(type)) {
    if (selectionSet !== undefined) return undefined;
    complete = compileLeaf(type);
  } else if (isObjectType(type) && selectionSet !== undefined) {
    const write = compileObject(type, selectionSet, resolvedFields, fields);
    if (write === undefined) return undefined;
    complete = (value) => (typeof value === 'object' ? write(value) : BAIL);
  } else return undefined;
  return (value) => (value === null || value === undefined ? 'null' : complete(value));
}

/**
 * A leaf's value as its `serialize` gives it, as JSON text; the values graphql-js's own scalars and enums give back
 * unchanged (a string as a String, an enum's value) are written without calling it.
 */
function compileLeaf(type: GraphQLLeafType): Completer {
  const serialize: Completer = (value) => {
    let serialized: unknown;
    try {
      serialized = type.serialize(value);
    } catch {
      return BAIL;
    }
    return serialized === null || serialized === undefined ? BAIL : (JSON.stringify(serialized) ?? BAIL);
  };
  if (isEnumType(type)) {
    const names = new Map(type.getValues().map((value) => [value.value as unknown, JSON.stringify(value.name)]));
    return (value) => names.get(value) ?? serialize(value);
  }
  if (!isSpecifiedScalarType(type)) return serialize;
  switch (type.name) {
    case 'String':
    case 'ID':
      return (value) => (typeof value === 'string' ? JSON.stringify(value) : serialize(value));
    case 'Boolean':
      return (value) => (typeof value === 'boolean' ? String(value) : serialize(value));
    case 'Int':
      return (value) =>
        Number.isInteger(value) && (value as number) <= MAX_INT && (value as number) >= -MAX_INT - 1
          ? String(value)
          : serialize(value);
    default:
      return serialize;
  }
}

/** GraphQL's Int is 32 bits (graphql-js refuses more). */
const MAX_INT = 2 ** 31 - 1;
