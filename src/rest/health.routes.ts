import { Router } from 'express';
import { errorBody } from '../http/http-error.js';
import { methodNotAllowed } from '../http/error-handler.js';
import { withTimeout } from '../with-timeout.js';

export interface Readiness {
  /** Resolves when the database answers; rejects otherwise. */
  checkDatabase(): Promise<void>;
}

/** How long /ready waits for the database to answer. */
const READY_TIMEOUT_MS = 2_000;

/** Liveness (`/health`: the process serves HTTP) and readiness (`/ready`: it can reach its database). */
export function healthRouter(readiness: Readiness): Router {
  const router = Router();
  router.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/ready', async (req, res) => {
    try {
      // A stalled database is not ready either: /ready answers within READY_TIMEOUT_MS.
      await withTimeout(readiness.checkDatabase(), READY_TIMEOUT_MS);
      res.json({ status: 'ready' });
    } catch (error) {
      req.log.warn({ err: error }, 'readiness check failed');
      res.status(503).json(errorBody(503, 'Database is not reachable'));
    }
  });
  router.all(['/health', '/ready'], methodNotAllowed(['GET']));
  return router;
}
