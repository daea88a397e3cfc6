import { loadConfig } from '../config.js';
import type { DomainContext } from '../domain/context.js';
import { createLogger } from '../logging.js';
import { openRuntime, type Runtime } from '../runtime.js';
import { terminal } from './terminal.js';

/**
 * Runs a CLI command against `kassa serve`'s database: PostgreSQL with DATABASE_URL, otherwise the embedded database,
 * through the running server's socket when one is up.
 */
export async function withRuntime<T>(work: (ctx: DomainContext, runtime: Runtime) => Promise<T>): Promise<T> {
  const config = loadConfig(terminal().env);
  const runtime = await openRuntime(config, createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel), 'cli');
  try {
    return await work(runtime.ctx, runtime);
  } finally {
    await runtime.close();
  }
}
