import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Network } from '../domain/shared/networks.js';
import type { EnvReader } from './env-reader.js';
import {
  asNetwork,
  registryFileSchema,
  registryNetworkProblems,
  registryNetworkSchema,
} from './network-registry.schema.js';
import { PACKAGE_ROOT } from './package-root.js';
import { hasUnambiguousHost, redactUrl } from './redact-url.js';
import { inTheClearOffThisMachine } from './transport-security.js';

/**
 * The enabled networks of the registry (KASSA_NETWORKS_FILE, checked against its schema in
 * network-registry.schema.ts), with their RPC URLs and confirmations from the environment.
 */
export function readNetworks(read: EnvReader, production: boolean): Network[] {
  const problems = read.problems;
  const file = path.resolve(read.string('KASSA_NETWORKS_FILE', path.join(PACKAGE_ROOT, 'config/networks.json')));
  let text: unknown;
  try {
    text = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    problems.push(`KASSA_NETWORKS_FILE: cannot read ${file}: ${(error as Error).message}`);
    return [];
  }
  const parsed = registryFileSchema.safeParse(text);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      problems.push(`${file}: ${issue.path.join('.') || 'the file'} ${issue.message}`);
    }
    return [];
  }
  const registry = parsed.data;
  const enabled = read.list('KASSA_NETWORKS', production ? ['ethereum', 'bsc'] : ['local']);
  const networks: Network[] = [];
  for (const slug of enabled) {
    const entry = registry.networks.find((network) => network.slug === slug);
    if (!entry) {
      problems.push(
        `KASSA_NETWORKS: unknown network "${slug}" (known: ${registry.networks.map((n) => n.slug).join(', ')})`,
      );
      continue;
    }
    const checked = registryNetworkSchema.safeParse(entry);
    const upper = slug.toUpperCase().replace(/[^A-Z0-9]/g, '_');
    const rpcUrls = read.list(`KASSA_RPC_URLS_${upper}`, (checked.success && checked.data.rpcUrls) || []);
    if (production && rpcUrls.length === 0) {
      problems.push(
        `KASSA_RPC_URLS_${upper} is required in production (${slug} is enabled): without an RPC node its payments ` +
          'are never seen and binds never checked, so its sessions could be paid and never marked paid',
      );
    }
    for (const url of rpcUrls) {
      if (production && inTheClearOffThisMachine(url)) {
        problems.push(
          `KASSA_RPC_URLS_${upper} must use https or wss in production (a node's answers decide what is paid; only ` +
            `a loopback address may be plain http): got "${redactUrl(url)}"`,
        );
      }
      if (!/^(https?|wss?):\/\/[^\s/]+/.test(url)) {
        problems.push(
          `KASSA_RPC_URLS_${upper} must be comma-separated http(s) or ws(s) URLs (got "${redactUrl(url)}")`,
        );
      } else if (!hasUnambiguousHost(url)) {
        problems.push(
          `KASSA_RPC_URLS_${upper}: percent-encode "/", "?", "#" and "@" inside a URL's user info, and "@" in its ` +
            `path or query (%2F, %3F, %23, %40): ` +
            `as written, part of the user info would be taken for the host (got "${redactUrl(url)}")`,
        );
      }
    }
    if (!checked.success) {
      problems.push(...registryNetworkProblems(file, slug, entry, checked.error));
      continue;
    }
    const confirmations = read.integer(`KASSA_CONFIRMATIONS_${upper}`, checked.data.confirmations, 0, 10000);
    networks.push(asNetwork(checked.data, rpcUrls, confirmations));
  }
  if (networks.length === 0 && problems.length === 0) problems.push('KASSA_NETWORKS: enable at least one network');
  return networks;
}
