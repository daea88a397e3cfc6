/** What withTimeout rejects with when the time is up. */
export class TimedOut extends Error {
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

/**
 * `work`, or a TimedOut rejection once `ms` have passed (the work itself goes on: only the wait ends). For a node
 * that does not answer (a bind's chain look-up), a database that does not (/ready), a step of a shutdown.
 */
export function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimedOut(ms)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
