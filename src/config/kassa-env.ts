import type { Env, EnvReader } from './env-reader.js';

/** The modes Kassa runs in (docs/operations.md#configuration, KASSA_ENV). */
export const KASSA_ENVS = ['development', 'test', 'production'] as const;
export type KassaEnv = (typeof KASSA_ENVS)[number];

/**
 * KASSA_ENV; NODE_ENV=production chooses production. Test mode relaxes safety rules, so only an explicit KASSA_ENV=test
 * chooses it (not NODE_ENV=test, which test runners set), and never beside NODE_ENV=production.
 */
export function readKassaEnv(read: EnvReader, env: Env): KassaEnv {
  const kassaEnv = read.oneOf('KASSA_ENV', KASSA_ENVS, env.NODE_ENV === 'production' ? 'production' : 'development');
  if (kassaEnv === 'test' && env.NODE_ENV === 'production') {
    read.problems.push(
      "KASSA_ENV=test is the mode of Kassa's own test suite and relaxes safety rules; " +
        'it cannot run with NODE_ENV=production (set KASSA_ENV=production)',
    );
  }
  // NODE_ENV=production beside KASSA_ENV=development would run production as development (demo org, no SSRF guard).
  if (kassaEnv === 'development' && (env.KASSA_ENV ?? '').trim() !== '' && env.NODE_ENV === 'production') {
    read.problems.push(
      'KASSA_ENV=development relaxes what production checks (webhook addresses, the master key, CHECKOUT_BASE_URL) ' +
        'and cannot run with NODE_ENV=production (set KASSA_ENV=production, or unset NODE_ENV)',
    );
  }
  return kassaEnv;
}
