import {
  Kind,
  isEnumType,
  isLeafType,
  isSpecifiedScalarType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLLeafType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { getMetadataStorage } from 'type-graphql';
import type { CheckoutSession } from '../domain/sessions/checkout-session.js';
import type { DomainContext } from '../domain/context.js';
import { boundTransactionsOf, getCheckoutSession } from '../domain/sessions/get-checkout-session.js';
import type { FlatHeaders } from '../metrics.js';
import { SESSION_FIELDS, SessionRead, toGraphqlTransactions, type ViewFields } from './views.js';
import { secondsUntilExpiry } from '../domain/sessions/checkout-page.js';

/**
 * A cold `checkoutSession` query of a shape Apollo already answered for another session, answered from this session's
 * view without Apollo; anything it cannot reproduce exactly goes on to Apollo (docs/decisions/0031).
 */
export interface ColdAnswer {
  readonly status: number;
  readonly apolloHeaders: FlatHeaders;
  readonly body: string;
  readonly operation: OperationDefinitionNode;
  readonly session: CheckoutSession;
  readonly readAt: Date;
  /** The body's text around its `secondsUntilExpiry` values (CachedQueries.keep's template), when it holds some. */
  readonly timeParts?: readonly string[];
}

/** A request Apollo answered, with its session id cut out, and what its answer was made of. */
interface Shape {
  readonly operation: OperationDefinitionNode;
  /** `{"data":{"<root key>":`, the body's text before the session's. */
  readonly prefix: string;
  readonly apolloHeaders: FlatHeaders;
  readonly transactions: boolean;
  /** Whether the root field asks `secondsUntilExpiry` (under any key). */
  readonly timed: boolean;
  /** Writes the root field's value from a session's read, making only the fields asked (see compileObject). */
  readonly write: ObjectWriter<SessionRead>;
}

/** Put where the session id was in a request's text. */
const ID_MARK = '\u0000session-id\u0000';
const UUID = /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/;
/** Shapes learned at most (each is one request text without its id, so few in practice: the page's two polls). */
const SHAPES_KEPT = 256;
/** The `checkoutSession` field resolvers this lane makes itself (their values come to the writer as `resolved`). */
const COLD_RESOLVERS = new Set(['transactions']);

/** A value graphql-js would not complete without an error: the request goes on to Apollo. */
const BAIL = Symbol('bail');

export class ColdQueries {
  private readonly shapes = new Map<string, Shape>();
  private readonly sessionType: GraphQLObjectType | undefined;
  /** Per object type, the fields answered by a resolver of their own, read from type-graphql's metadata. */
  private readonly resolvedFields = fieldsWithResolvers();

  constructor(schema: GraphQLSchema) {
    const field = schema.getQueryType()?.getFields().checkoutSession;
    const type = field && (isNonNullType(field.type) ? field.type.ofType : field.type);
    this.sessionType = type && isObjectType(type) ? type : undefined;
  }

  /** Learns the shape of a request Apollo answered and CachedQueries kept (one session, read by its id in `asked`). */
  learn(
    request: { method: 'GET' | 'POST'; asked: string; accept: string | undefined },
    operation: OperationDefinitionNode,
    apolloHeaders: FlatHeaders,
    body: string,
    sessions: readonly CheckoutSession[],
  ): void {
    const [session] = sessions;
    if (sessions.length !== 1 || !request.asked.includes(session!.id) || request.asked.includes(ID_MARK)) return;
    const root = operation.selectionSet.selections;
    const field = root[0];
    if (root.length !== 1 || field?.kind !== Kind.FIELD || !field.selectionSet) return;
    if (operation.directives?.length || field.directives?.length || !plain(field.selectionSet)) return;
    const key = shapeKey(request.method, request.accept, request.asked.split(session!.id).join(ID_MARK));
    // Apollo's body must be what this writes: the data alone, as JSON.stringify writes it, and a newline.
    if (this.shapes.has(key) || this.sessionType === undefined || !sameJson(body)) return;
    const write = compileObject(this.sessionType, field.selectionSet, this.resolvedFields, SESSION_FIELDS, {
      ownResolvers: COLD_RESOLVERS,
      timeField: 'secondsUntilExpiry',
    });
    // A field it cannot make as graphql-js would (a resolver of its own, an unknown type): Apollo answers the shape.
    if (write === undefined) return;
    const rootKey = field.alias?.value ?? field.name.value;
    if (this.shapes.size >= SHAPES_KEPT) this.shapes.delete(this.shapes.keys().next().value!);
    const transactions = field.selectionSet.selections.some(
      (selection) => selection.kind === Kind.FIELD && selection.name.value === 'transactions',
    );
    const timed = field.selectionSet.selections.some(
      (selection) => selection.kind === Kind.FIELD && selection.name.value === 'secondsUntilExpiry',
    );
    const prefix = `{"data":{${JSON.stringify(rootKey)}:`;
    this.shapes.set(key, { operation, prefix, apolloHeaders, transactions, timed, write });
  }

  /**
   * Apollo's answer to `asked` made here, when a request of its shape was learned; undefined at once (no promise)
   * when none was, and from the promise when this cannot make the answer Apollo would give.
   */
  answer(
    method: 'GET' | 'POST',
    asked: string,
    accept: string | undefined,
    ctx: DomainContext,
  ): Promise<ColdAnswer | undefined> | undefined {
    if (this.shapes.size === 0 || this.sessionType === undefined) return undefined;
    const id = UUID.exec(asked)?.[0];
    if (id === undefined) return undefined;
    const shape = this.shapes.get(shapeKey(method, accept, asked.split(id).join(ID_MARK)));
    return shape && this.fill(shape, id, ctx).catch(() => undefined);
  }

  private async fill(shape: Shape, id: string, ctx: DomainContext): Promise<ColdAnswer | undefined> {
    const session = await getCheckoutSession(ctx, id);
    const readAt = ctx.clock();
    const resolved = shape.transactions
      ? { transactions: toGraphqlTransactions(await boundTransactionsOf(ctx, session.id)) }
      : NOTHING_RESOLVED;
    // Written with the text around each count apart: the body, and the template the kept answer is rewritten from.
    const parts: string[] | undefined = shape.timed ? [shape.prefix] : undefined;
    const text = shape.write(new SessionRead(session, ctx, readAt), resolved, parts);
    if (text === BAIL) return undefined;
    const answer = { status: 200, apolloHeaders: shape.apolloHeaders, operation: shape.operation, session, readAt };
    if (parts === undefined) return { ...answer, body: `${shape.prefix}${text}}}\n` };
    parts[parts.length - 1] += `${text}}}\n`;
    return { ...answer, body: parts.join(String(secondsUntilExpiry(session, readAt))), timeParts: parts };
  }
}

function shapeKey(method: string, accept: string | undefined, text: string): string {
  return `${method}\n${accept ?? ''}\n${text}`;
}

/** Only fields, without arguments or directives, all the way down. */
function plain(selectionSet: SelectionSetNode): boolean {
  return selectionSet.selections.every(
    (selection) =>
      selection.kind === Kind.FIELD &&
      !selection.arguments?.length &&
      !selection.directives?.length &&
      (selection.selectionSet === undefined || plain(selection.selectionSet)),
  );
}

function sameJson(body: string): boolean {
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    return Object.keys(parsed).length === 1 && 'data' in parsed && `${JSON.stringify(parsed)}\n` === body;
  } catch {
    return false;
  }
}

const NOTHING_RESOLVED: Readonly<Record<string, unknown>> = {};

/** A field's value completed as graphql-js completes a value of its type, written as JSON text; or BAIL. */
type Completer = (value: unknown) => string | typeof BAIL;
/**
 * An object's selected fields from its source, completed and written as JSON text, or BAIL; `resolved` holds its field
 * resolvers' values. Given `parts`, the text before each time field goes there, and the rest is answered.
 */
type ObjectWriter<S> = (
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
function compileObject<S>(
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
