import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/config.js';

/**
 * The contracts' compiled artefacts are committed (so `npm start` needs no
 * compiler, and the deposit factory's address is fixed); compiling
 * contracts/*.sol again with solc and OpenZeppelin from npm must give exactly
 * the committed files.
 */
describe('contracts/build', () => {
  it('is what solc makes of contracts/*.sol today (run `npm run contracts` after changing one)', async () => {
    const run = await promisify(execFile)(
      process.execPath,
      [path.join(PACKAGE_ROOT, 'scripts/compile-contracts.mjs'), '--check'],
      { timeout: 60_000 },
    );
    expect(run.stdout).toBe('contracts/build is up to date\n');
  }, 60_000);

  it('holds SandboxToken, an ERC-20 with decimals() and a minter-only mint()', () => {
    const artefact = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'contracts/build/SandboxToken.json'), 'utf8')) as {
      abi: Array<{ name?: string; type: string }>;
      bytecode: string;
    };
    const functions = artefact.abi
      .filter((entry) => entry.type === 'function')
      .map((entry) => entry.name)
      .sort();
    expect(functions).toEqual([
      'allowance',
      'approve',
      'balanceOf',
      'decimals',
      'mint',
      'minter',
      'name',
      'symbol',
      'totalSupply',
      'transfer',
      'transferFrom',
    ]);
    expect(artefact.bytecode).toMatch(/^0x[0-9a-f]{1000,}$/);
  });
});
