import {
  Kind,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { CheckoutSession } from '../domain/sessions/checkout-session.js';
import type { DomainContext } from '../domain/context.js';
import { boundTransactionsOf, getCheckoutSession } from '../domain/sessions/get-checkout-session.js';
import type { FlatHeaders } from '../metrics.js';
import { toGraphqlSessionOnce, toGraphqlTransactions } from './views.js';
import { COUNT_MARK } from './cached-queries.js';

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
  readonly rootKey: string;
  readonly selection: SelectionSetNode;
  readonly apolloHeaders: FlatHeaders;
  readonly transactions: boolean;
  /** The response keys of its `secondsUntilExpiry` fields (under the root field). */
  readonly timeKeys: readonly string[];
}

/** Put where the session id was in a request's text. */
const ID_MARK = '\u0000session-id\u0000';
const UUID = /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/;
/** Shapes learned at most (each is one request text without its id, so few in practice: the page's two polls). */
const SHAPES_KEPT = 256;
/** `checkoutSession` fields with a resolver of their own (CheckoutSessionResolver); the others are view properties. */
const FIELD_RESOLVERS = new Set(['transactions']);

/** A value graphql-js would not complete without an error: the request goes on to Apollo. */
const BAIL = Symbol('bail');

export class ColdQueries {
  private readonly shapes = new Map<string, Shape>();
  private readonly sessionType: GraphQLObjectType | undefined;

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
    if (this.shapes.has(key) || !sameJson(body)) return;
    const rootKey = field.alias?.value ?? field.name.value;
    if (this.shapes.size >= SHAPES_KEPT) this.shapes.delete(this.shapes.keys().next().value!);
    const transactions = field.selectionSet.selections.some(
      (selection) => selection.kind === Kind.FIELD && selection.name.value === 'transactions',
    );
    const timeKeys = field.selectionSet.selections.flatMap((selection) =>
      selection.kind === Kind.FIELD && selection.name.value === 'secondsUntilExpiry'
        ? [selection.alias?.value ?? selection.name.value]
        : [],
    );
    this.shapes.set(key, { operation, rootKey, selection: field.selectionSet, apolloHeaders, transactions, timeKeys });
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
    const view = toGraphqlSessionOnce(session, ctx, readAt) as unknown as Record<string, unknown>;
    const resolved = shape.transactions
      ? { transactions: toGraphqlTransactions(await boundTransactionsOf(ctx, session.id)) }
      : {};
    const data = completeObject(this.sessionType!, shape.selection, view, resolved);
    if (data === BAIL) return undefined;
    const answer = { status: 200, apolloHeaders: shape.apolloHeaders, operation: shape.operation, session, readAt };
    if (shape.timeKeys.length === 0)
      return { ...answer, body: `${JSON.stringify({ data: { [shape.rootKey]: data } })}\n` };
    // Written once with a mark where each count goes: the body, and the template the kept answer is rewritten from.
    const count = String(data[shape.timeKeys[0]!]);
    for (const key of shape.timeKeys) data[key] = COUNT_MARK;
    const timeParts = `${JSON.stringify({ data: { [shape.rootKey]: data } })}\n`.split(`"${COUNT_MARK}"`);
    // The mark found anywhere else (a value that spells it): Apollo answers.
    if (timeParts.length !== shape.timeKeys.length + 1) return undefined;
    return { ...answer, body: timeParts.join(count), timeParts };
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

/**
 * `source`'s fields as `selectionSet` asks them, completed as graphql-js completes a value of their type; `resolved`
 * holds what the type's own field resolvers gave.
 */
function completeObject(
  type: GraphQLObjectType,
  selectionSet: SelectionSetNode,
  source: Record<string, unknown>,
  resolved: Record<string, unknown> = {},
): Record<string, unknown> | typeof BAIL {
  const fields = type.getFields();
  const result: Record<string, unknown> = {};
  for (const selection of selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) return BAIL;
    const name = selection.name.value;
    const key = selection.alias?.value ?? name;
    if (key in result) return BAIL;
    if (name === '__typename') {
      result[key] = type.name;
      continue;
    }
    const field = fields[name];
    if (field === undefined) return BAIL;
    let value: unknown;
    if (name in resolved) value = resolved[name];
    else if (FIELD_RESOLVERS.has(name) || !Object.hasOwn(source, name) || typeof source[name] === 'function')
      return BAIL;
    else value = source[name];
    const completed = complete(field.type, value, selection.selectionSet);
    if (completed === BAIL) return BAIL;
    result[key] = completed;
  }
  return result;
}

function complete(type: GraphQLOutputType, value: unknown, selectionSet: SelectionSetNode | undefined): unknown {
  if (isNonNullType(type)) {
    const completed = complete(type.ofType, value, selectionSet);
    return completed === null ? BAIL : completed;
  }
  if (value === null || value === undefined) return null;
  if (isListType(type)) {
    if (!Array.isArray(value)) return BAIL;
    const list: unknown[] = [];
    for (const item of value) {
      const completed = complete(type.ofType, item, selectionSet);
      if (completed === BAIL) return BAIL;
      list.push(completed);
    }
    return list;
  }
  if (isLeafType(type)) {
    try {
      const serialized: unknown = type.serialize(value);
      return serialized === null || serialized === undefined ? BAIL : serialized;
    } catch {
      return BAIL;
    }
  }
  if (isObjectType(type) && selectionSet !== undefined && typeof value === 'object')
    return completeObject(type, selectionSet, value as Record<string, unknown>);
  return BAIL;
}
