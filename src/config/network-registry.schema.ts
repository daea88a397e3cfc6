import { z } from 'zod';
import { ASSET_TICKERS } from '../domain/shared/assets.js';
import type { Network } from '../domain/shared/networks.js';

/**
 * The network registry file's shape (KASSA_NETWORKS_FILE, config/networks.json). Only the networks KASSA_NETWORKS
 * enables are checked in full, so a broken entry of a network nobody enabled does not stop Kassa.
 */

const wholeNumber = (min: number, max: number) =>
  z
    .int({ error: `must be a whole number from ${min} to ${max}` })
    .min(min)
    .max(max);

/** An ERC-20 token a network carries for one of Kassa's assets. */
const registryToken = z.object({
  ticker: z.enum(ASSET_TICKERS),
  address: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
  decimals: wholeNumber(0, 255),
});

/** A network entry; KASSA_RPC_URLS_<SLUG> and KASSA_CONFIRMATIONS_<SLUG> may replace `rpcUrls` and `confirmations`. */
export const registryNetworkSchema = z.object({
  slug: z.string(),
  name: z.string({ error: 'must be a name' }).min(1, { error: 'must be a name' }),
  chainId: z.int({ error: 'must be an EIP-155 chain id (a positive whole number)' }).positive({
    error: 'must be an EIP-155 chain id (a positive whole number)',
  }),
  nativeAsset: z.enum(ASSET_TICKERS, { error: `must be one of ${ASSET_TICKERS.join(', ')}, or null` }).nullable(),
  confirmations: wholeNumber(0, 10_000),
  tokens: z.array(registryToken, { error: 'must be a list of tokens' }),
  rpcUrls: z.array(z.string(), { error: 'must be a list of URLs' }).optional(),
});

export type RegistryNetwork = z.infer<typeof registryNetworkSchema>;

/** The file: a list of networks, each named by a slug; the rest of an entry is checked once it is enabled. */
export const registryFileSchema = z.object(
  {
    networks: z.array(
      z.looseObject({ slug: z.string({ error: 'must be a string' }) }, { error: 'must be an object' }),
      { error: 'must be a list of networks' },
    ),
  },
  { error: 'must be a JSON object with a list of networks' },
);

/** A checked entry, with the RPC URLs and confirmations the environment may have replaced, as the domain's Network. */
export const asNetwork = (entry: RegistryNetwork, rpcUrls: readonly string[], confirmations: number): Network =>
  Object.freeze({ ...entry, rpcUrls, confirmations, tokens: Object.freeze([...entry.tokens]) });

/**
 * The problems of an enabled network's entry, each naming the file and the network. The two
 * mistakes operators make most keep their own sentence: an unknown native asset and a bad token.
 */
export function registryNetworkProblems(file: string, slug: string, entry: unknown, error: z.ZodError): string[] {
  const problems: string[] = [];
  const badTokens = new Set<number>();
  for (const issue of error.issues) {
    const [field, index] = issue.path;
    const nativeAsset = (entry as { nativeAsset?: unknown }).nativeAsset;
    if (field === 'nativeAsset' && nativeAsset !== undefined) {
      problems.push(`${file}: network ${slug} has an unknown native asset ${String(nativeAsset)}`);
    } else if (field === 'tokens' && typeof index === 'number') {
      if (badTokens.has(index)) continue;
      badTokens.add(index);
      const token = (entry as { tokens: unknown[] }).tokens[index];
      problems.push(`${file}: network ${slug} has an invalid token entry ${JSON.stringify(token)}`);
    } else {
      problems.push(`${file}: network ${slug}: ${issue.path.join('.')} ${issue.message}`);
    }
  }
  return problems;
}
