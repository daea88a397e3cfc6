#!/usr/bin/env node
// Compiles contracts/SandboxToken.sol with solc (npm, offline) and OpenZeppelin from node_modules.
// The build artefact is committed (contracts/build/SandboxToken.json), so `npm start` needs no compiler;
// test/integration/sandbox-contract.test.ts fails when the source and the artefact drift apart.
// Usage: node scripts/compile-contracts.mjs [--check]
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const artefactPath = path.join(root, 'contracts/build/SandboxToken.json');

export function compileSandboxToken() {
  const solc = require('solc');
  const input = {
    language: 'Solidity',
    sources: { 'SandboxToken.sol': { content: readFileSync(path.join(root, 'contracts/SandboxToken.sol'), 'utf8') } },
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
  const contract = output.contracts['SandboxToken.sol'].SandboxToken;
  return {
    contractName: 'SandboxToken',
    compiler: `solc ${solc.version()}`,
    abi: contract.abi,
    bytecode: `0x${contract.evm.bytecode.object}`,
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const artefact = `${JSON.stringify(compileSandboxToken(), null, 2)}\n`;
  if (process.argv.includes('--check')) {
    if (readFileSync(artefactPath, 'utf8') !== artefact) {
      console.error('contracts/build/SandboxToken.json is stale: run `npm run contracts`');
      process.exit(1);
    }
    console.log('contracts/build/SandboxToken.json is up to date');
  } else {
    writeFileSync(artefactPath, artefact);
    console.log(`wrote ${path.relative(root, artefactPath)}`);
  }
}
