import { Router, type Request, type Response } from 'express';
import type { DomainContext } from '../domain/context.js';
import { changedSessionsOf } from '../domain/dashboard/session-list.js';
import { roleIn } from '../domain/dashboard/sign-in.js';
import { requirePermission } from '../domain/dashboard/roles.js';
import { principalOf, type DashboardCookieOptions } from '../http/dashboard-session.js';

/** What the live list needs of the change feed (src/db/change-feed): which sessions changed, and when it was deaf. */
export interface SessionChangeSource {
  subscribe(
    channel: 'kassa_checkout_session' | 'kassa_session_created',
    listener: (sessionId: string) => void,
  ): () => void;
  onReset(listener: () => void): () => void;
}

/** Changes are gathered this long and told at once: a payment changes a session several times in a moment. */
export const LIVE_BATCH_MS = 250;
/** A comment this often keeps proxies from closing a quiet stream, and checks the session again. */
export const LIVE_HEARTBEAT_MS = 25_000;

/**
 * Server-sent events of the organisation's changed sessions (docs/dashboard.md#live-updates): each batch is filtered
 * to the organisation and its person authenticated again, so no other organisation's session is ever named.
 */
export function dashboardLiveRouter(
  ctx: DomainContext,
  options: DashboardCookieOptions,
  changes: SessionChangeSource | undefined,
): Router {
  const router = Router();
  router.get('/dashboard/api/organisations/:organisationId/live', async (req: Request, res: Response) => {
    const organisationId = req.params.organisationId as string;
    const principal = await principalOf(ctx, req, options);
    requirePermission(roleIn(principal, organisationId), 'read');
    res.status(200).set({
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
    res.write('retry: 3000\n\n');
    if (!changes) return void res.end();

    const pending = new Set<string>();
    let timer: NodeJS.Timeout | null = null;
    let closed = false;
    const stop = () => {
      if (closed) return;
      closed = true;
      for (const unsubscribe of unsubscribers) unsubscribe();
      unreset();
      clearInterval(heartbeat);
      if (timer) clearTimeout(timer);
      res.end();
    };
    /** The person again (ended, disabled or removed: the stream ends), then what they may hear of. */
    const flush = async () => {
      timer = null;
      const ids = [...pending];
      pending.clear();
      try {
        const now = await principalOf(ctx, req, options);
        const theirs = ids.length > 0 ? await changedSessionsOf(ctx, now, organisationId, ids) : [];
        if (!closed && theirs.length > 0) res.write(`event: sessions\ndata: ${JSON.stringify(theirs)}\n\n`);
      } catch {
        stop();
      }
    };
    const heard = (sessionId: string) => {
      pending.add(sessionId);
      timer ??= setTimeout(() => void flush(), LIVE_BATCH_MS);
    };
    const unsubscribers = [
      changes.subscribe('kassa_checkout_session', heard),
      changes.subscribe('kassa_session_created', heard),
    ];
    const unreset = changes.onReset(() => {
      if (!closed) res.write('event: reset\ndata: {}\n\n');
    });
    const heartbeat = setInterval(() => {
      res.write(': still here\n\n');
      timer ??= setTimeout(() => void flush(), 0);
    }, LIVE_HEARTBEAT_MS);
    req.on('close', stop);
  });
  return router;
}
