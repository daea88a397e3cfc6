#!/usr/bin/env node
// Compiles contracts/*.sol with solc (npm, offline) and OpenZeppelin from node_modules into one artefact per
// contract in contracts/build/ (SandboxToken, DepositFactory, DepositSweeper). The artefacts are committed, so
// `npm start` needs no compiler, and the deposit factory's bytecode (hence its address on every chain) is fixed;
// test/integration/sandbox-contract.test.ts fails when a source and its artefact drift apart.
// contracts/build/Multicall3.json is not built here: it is the canonical pre-signed deployment (see that file).
// Usage: node scripts/compile-contracts.mjs [--check]
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Each built contract: its source file and its name in it. */
const CONTRACTS = [
  { source: 'SandboxToken.sol', name: 'SandboxToken' },
  { source: 'DepositFactory.sol', name: 'DepositFactory' },
  { source: 'DepositFactory.sol', name: 'DepositSweeper' },
];

const artefactPath = (name) => path.join(root, `contracts/build/${name}.json`);

export function compileContracts() {
  const solc = require('solc');
  const sources = Object.fromEntries(
    [...new Set(CONTRACTS.map((c) => c.source))].map((source) => [
      source,
      { content: readFileSync(path.join(root, 'contracts', source), 'utf8') },
    ]),
  );
  const input = {
    language: 'Solidity',
    sources,
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: 'cancun',
      // No metadata hash: the bytecode then depends only on the source, not on file paths.
      metadata: { bytecodeHash: 'none' },
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  };
  const findImports = (importPath) => {
    try {
      return { contents: readFileSync(require.resolve(importPath), 'utf8') };
    } catch {
      return { error: `not found: ${importPath}` };
    }
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  return CONTRACTS.map(({ source, name }) => {
    const contract = output.contracts[source][name];
    return {
      contractName: name,
      compiler: `solc ${solc.version()}`,
      abi: contract.abi,
      bytecode: `0x${contract.evm.bytecode.object}`,
    };
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const built of compileContracts()) {
    const file = artefactPath(built.contractName);
    const artefact = `${JSON.stringify(built, null, 2)}\n`;
    const relative = path.relative(root, file);
    if (check) {
      let committed = null;
      try {
        committed = readFileSync(file, 'utf8');
      } catch {
        // missing: stale
      }
      if (committed !== artefact) {
        console.error(`${relative} is stale: run \`npm run contracts\``);
        stale += 1;
      }
    } else {
      writeFileSync(file, artefact);
      console.log(`wrote ${relative}`);
    }
  }
  if (stale > 0) process.exit(1);
  if (check) console.log('contracts/build is up to date');
}
