import type { Network } from '../domain/shared/networks.js';
import type { ChainRpc } from './rpc.js';

/**
 * The registry's chain id and token decimals checked against the chain before the first scan (wrong decimals would
 * credit amounts off by powers of ten): every disagreement, empty when they agree (docs/payment-detection.md).
 */
export async function registryMismatches(rpc: ChainRpc, network: Network): Promise<string[]> {
  const chainId = await rpc.chainId();
  const problems: string[] = [];
  if (chainId !== network.chainId) {
    problems.push(`RPC serves chain id ${chainId}, the registry says ${network.chainId}`);
  }
  for (const token of network.tokens) {
    const decimals = await rpc.tokenDecimals(token.address);
    if (decimals === null) problems.push(`${token.ticker}: no ERC-20 contract at ${token.address}`);
    else if (decimals !== token.decimals) {
      const registered = `the registry says ${token.decimals}`;
      problems.push(`${token.ticker} at ${token.address} has ${decimals} decimals on chain, ${registered}`);
    }
  }
  return problems;
}
