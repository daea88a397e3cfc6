import {
  Kind,
  isNonNullType,
  isObjectType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { CheckoutSession } from '../domain/sessions/checkout-session.js';
import type { DomainContext } from '../domain/context.js';
import { boundTransactionsOf, getCheckoutSession } from '../domain/sessions/get-checkout-session.js';
import type { FlatHeaders } from '../metrics.js';
import { SESSION_FIELDS, SessionRead, toGraphqlTransactions } from './views.js';
import { BAIL, NOTHING_RESOLVED, compileObject, fieldsWithResolvers, type ObjectWriter } from './cold-writer.js';
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
