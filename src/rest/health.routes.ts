import { Router } from 'express';
import { errorBody } from './http-error.js';
import { methodNotAllowed } from './error-handler.js';

export interface Readiness {
  /** Resolves when the database answers; rejects otherwise. */
  checkDatabase(): Promise<void>;
}

/** Liveness (`/health`: the process serves HTTP) and readiness (`/ready`: it can reach its database). */
export function healthRouter(readiness: Readiness): Router {
  const router = Router();
  router.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/ready', async (req, res) => {
    try {
      await readiness.checkDatabase();
      res.json({ status: 'ready' });
    } catch (error) {
      req.log.warn({ err: error }, 'readiness check failed');
      res.status(503).json(errorBody(503, 'Database is not reachable'));
    }
  });
  router.all(['/health', '/ready'], methodNotAllowed(['GET']));
  return router;
}
