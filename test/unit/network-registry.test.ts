import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EnvReader } from '../../src/config/env-reader.js';
import { readNetworks } from '../../src/config/network-registry.js';
import { registryFileSchema, registryNetworkSchema } from '../../src/config/network-registry.schema.js';

// The network registry file (KASSA_NETWORKS_FILE) against its zod schema: every problem names the file and the network.

const SHIPPED = fileURLToPath(new URL('../../config/networks.json', import.meta.url));
const shipped = () => JSON.parse(readFileSync(SHIPPED, 'utf8')) as { networks: Array<Record<string, unknown>> };

function read(registry: unknown, enabled = 'local'): { networks: unknown[]; problems: string[] } {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'kassa-registry-')), 'networks.json');
  writeFileSync(file, typeof registry === 'string' ? registry : JSON.stringify(registry));
  const problems: string[] = [];
  const networks = readNetworks(new EnvReader({ KASSA_NETWORKS_FILE: file, KASSA_NETWORKS: enabled }, problems), false);
  return { networks, problems: problems.map((problem) => problem.replace(file, '<file>')) };
}

function withLocal(change: (local: Record<string, unknown>) => void) {
  const registry = shipped();
  change(registry.networks.find((network) => network.slug === 'local')!);
  return registry;
}

describe('the shipped registry', () => {
  it('fits the schema, every network of it', () => {
    const registry = registryFileSchema.parse(shipped());
    for (const network of registry.networks) expect(registryNetworkSchema.safeParse(network).error).toBeUndefined();
  });
});

describe('a registry file with mistakes', () => {
  it('keeps the sentences of the common mistakes: an unknown native asset, a bad token entry (once per token)', () => {
    const registry = withLocal((local) => {
      local.nativeAsset = 'DOGE';
      (local.tokens as Array<Record<string, unknown>>)[1] = { ticker: 'XRP', address: '0x12', decimals: 6 };
    });
    expect(read(registry).problems).toEqual([
      '<file>: network local has an unknown native asset DOGE',
      '<file>: network local has an invalid token entry {"ticker":"XRP","address":"0x12","decimals":6}',
    ]);
  });

  it('names the field of any other problem', () => {
    const registry = withLocal((local) => {
      local.chainId = '31337';
      local.confirmations = -1;
      delete local.name;
    });
    expect(read(registry).problems).toEqual([
      '<file>: network local: name must be a name',
      '<file>: network local: chainId must be an EIP-155 chain id (a positive whole number)',
      '<file>: network local: confirmations must be a whole number from 0 to 10000',
    ]);
  });

  it('checks only the networks KASSA_NETWORKS enables', () => {
    const registry = shipped();
    registry.networks.find((network) => network.slug === 'polygon')!.chainId = 'nope';
    expect(read(registry)).toMatchObject({ problems: [] });
    expect(read(registry, 'local,polygon').problems).toEqual([
      '<file>: network polygon: chainId must be an EIP-155 chain id (a positive whole number)',
    ]);
  });

  it('refuses a file that is not a list of networks, or not JSON', () => {
    expect(read({ chains: [] }).problems).toEqual(['<file>: networks must be a list of networks']);
    expect(read([]).problems).toEqual(['<file>: the file must be a JSON object with a list of networks']);
    expect(read({ networks: [{ name: 'no slug' }] }).problems).toEqual(['<file>: networks.0.slug must be a string']);
    const notJson = read('{"networks": [').problems;
    expect(notJson).toEqual([expect.stringMatching(/^KASSA_NETWORKS_FILE: cannot read <file>: /)]);
  });
});
