import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isAssetTicker } from '../domain/assets.js';
import type { Network } from '../domain/networks.js';
import type { EnvReader } from './env-reader.js';
import { PACKAGE_ROOT } from './package-root.js';

interface RegistryFile {
  networks: Array<Omit<Network, 'rpcUrls'> & { rpcUrls?: string[] }>;
}

/**
 * An RPC URL as it may appear in an error: scheme and host only. Providers put API keys in
 * the user info, the path (`/v3/<key>`) or the query, so none of those is ever printed.
 */
export function redactUrl(text: string): string {
  const scheme = /^([a-z][a-z0-9+.-]*:\/\/)?(.*)$/i.exec(text)!;
  const rest = scheme[2]!;
  const hostEnd = rest.search(/[/?#]/);
  let host = hostEnd === -1 ? rest : rest.slice(0, hostEnd);
  const at = host.lastIndexOf('@');
  if (at !== -1) host = `***@${host.slice(at + 1)}`;
  return `${scheme[1] ?? ''}${host}${hostEnd === -1 ? '' : '/***'}`;
}

/** The enabled networks of the registry (KASSA_NETWORKS_FILE), with their RPC URLs and confirmations from the environment. */
export function readNetworks(read: EnvReader, production: boolean): Network[] {
  const problems = read.problems;
  const file = path.resolve(read.string('KASSA_NETWORKS_FILE', path.join(PACKAGE_ROOT, 'config/networks.json')));
  let registry: RegistryFile;
  try {
    registry = JSON.parse(readFileSync(file, 'utf8')) as RegistryFile;
  } catch (error) {
    problems.push(`KASSA_NETWORKS_FILE: cannot read ${file}: ${(error as Error).message}`);
    return [];
  }
  const enabled = read.list('KASSA_NETWORKS', production ? ['ethereum', 'bsc'] : ['local']);
  const networks: Network[] = [];
  for (const slug of enabled) {
    const entry = registry.networks.find((network) => network.slug === slug);
    if (!entry) {
      problems.push(`KASSA_NETWORKS: unknown network "${slug}" (known: ${registry.networks.map((n) => n.slug).join(', ')})`);
      continue;
    }
    const upper = slug.toUpperCase().replace(/[^A-Z0-9]/g, '_');
    const rpcUrls = read.list(`KASSA_RPC_URLS_${upper}`, entry.rpcUrls ?? []);
    for (const url of rpcUrls) {
      if (!/^(https?|wss?):\/\/[^\s/]+/.test(url)) {
        problems.push(`KASSA_RPC_URLS_${upper} must be comma-separated http(s) or ws(s) URLs (got "${redactUrl(url)}")`);
      }
    }
    const confirmations = read.integer(`KASSA_CONFIRMATIONS_${upper}`, entry.confirmations, 0, 10000);
    if (entry.nativeAsset !== null && !isAssetTicker(entry.nativeAsset)) {
      problems.push(`${file}: network ${slug} has an unknown native asset ${entry.nativeAsset}`);
    }
    for (const token of entry.tokens) {
      if (!isAssetTicker(token.ticker) || !/^0x[0-9a-fA-F]{40}$/.test(token.address)) {
        problems.push(`${file}: network ${slug} has an invalid token entry ${JSON.stringify(token)}`);
      }
    }
    networks.push(Object.freeze({ ...entry, rpcUrls, confirmations, tokens: Object.freeze([...entry.tokens]) }));
  }
  if (networks.length === 0 && problems.length === 0) problems.push('KASSA_NETWORKS: enable at least one network');
  return networks;
}
