import type { z } from 'zod';

export interface RouteDoc {
  readonly method: 'get' | 'post' | 'patch' | 'delete';
  /** Express path, e.g. /checkout-sessions/:id */
  readonly path: string;
  readonly summary: string;
  /**
   * false: public. 'body': create, `{timestamp}.{rawBody}`. 'request':
   * `{timestamp}.{METHOD}.{path?query}.{rawBody}` (docs/api/rest.md#signing-a-merchant-call).
   */
  readonly signed: false | 'body' | 'request';
  /** The zod schema the route validates its body with (a request schema carries a `title`, its type's name). */
  readonly body?: z.ZodType;
  readonly query?: z.ZodObject;
  /** `schema`: a component of openapi-components.ts (a `$ref`), or a small schema written inline. */
  readonly ok: {
    status: number;
    description: string;
    schema?: z.ZodType;
    contentType?: string;
    /** Headers of the success answer, by name: their description. */
    headers?: Readonly<Record<string, string>>;
  };
  /** Answers with an ETag and honours If-None-Match with a 304 (docs/api/rest.md#caching). */
  readonly conditional?: boolean;
  /** Error statuses this operation answers (500 is added to all). */
  readonly errors: readonly number[];
  readonly headers?: readonly { name: string; description: string }[];
}

// Every signed route answers its failing calls 429 once their address or key id failed too many signature checks
// (docs/api/rest.md#rate-limits); a correctly signed call never.
export const SIGNED_BODY_ERRORS = [400, 401, 404, 413, 415, 429] as const;

/** What one operation of a resource answers on success (200). */
interface OperationDoc {
  readonly summary: string;
  readonly description: string;
  readonly schema: z.ZodType;
}

/** A signed resource's operations whose statuses are the same for every resource (docs/api/rest.md). */
export interface SignedResourceDocs {
  /** `post {path}`: its own success answer and the statuses it adds to a signed body's. */
  readonly create: Required<Pick<RouteDoc, 'summary' | 'body'>> & {
    readonly ok: RouteDoc['ok'];
    readonly moreErrors: readonly number[];
  };
  readonly list: OperationDoc;
  readonly read: OperationDoc;
  readonly change: OperationDoc & { readonly body: z.ZodType };
}

/** Create, list, read and change of a signed resource at `path` (`{path}/:id` for one of them), in that order. */
export function signedResource(path: string, docs: SignedResourceDocs): RouteDoc[] {
  const signed = 'request';
  const ok = ({ description, schema }: OperationDoc) => ({ status: 200, description, schema });
  const { create, list, read, change } = docs;
  return [
    {
      method: 'post',
      path,
      summary: create.summary,
      signed,
      body: create.body,
      ok: create.ok,
      errors: [...SIGNED_BODY_ERRORS, ...create.moreErrors],
    },
    { method: 'get', path, summary: list.summary, signed, ok: ok(list), errors: [401, 429] },
    { method: 'get', path: `${path}/:id`, summary: read.summary, signed, ok: ok(read), errors: [400, 401, 404, 429] },
    {
      method: 'patch',
      path: `${path}/:id`,
      summary: change.summary,
      signed,
      body: change.body,
      ok: ok(change),
      errors: SIGNED_BODY_ERRORS,
    },
  ];
}
