import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isAssetTicker } from '../domain/assets.js';
import type { Network } from '../domain/networks.js';
import type { EnvReader } from './env-reader.js';
import { PACKAGE_ROOT } from './package-root.js';
import { hasUnambiguousHost, redactUrl } from './redact-url.js';

interface RegistryFile {
  networks: Array<Omit<Network, 'rpcUrls'> & { rpcUrls?: string[] }>;
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
      } else if (!hasUnambiguousHost(url)) {
        problems.push(
          `KASSA_RPC_URLS_${upper}: percent-encode "/", "?", "#" and "@" inside a URL's user info, and "@" in its path or query (%2F, %3F, %23, %40): ` +
            `as written, part of the user info would be taken for the host (got "${redactUrl(url)}")`,
        );
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
