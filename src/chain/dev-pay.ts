import { isAssetTicker, type AssetTicker } from '../domain/shared/assets.js';
import { bindTransaction } from '../domain/payments/bind-transaction.js';
import { isTerminal } from '../domain/sessions/checkout-session.js';
import type { DomainContext } from '../domain/context.js';
import { DomainError, invalid, notFound, unavailable } from '../domain/shared/errors.js';
import { checkSessionId } from '../domain/sessions/get-checkout-session.js';
import { Decimal, fractionalDigits, fromBaseUnits, toBaseUnitsCeil } from '../domain/shared/money.js';
import { amountDue } from '../domain/sessions/session-amounts.js';
import { assetsOn, NATIVE_COIN_DECIMALS, type Network, type NetworkToken } from '../domain/shared/networks.js';
import { rpcChainId } from './anvil.js';
import { DEFAULT_PAYER_ACCOUNT, sandboxContractTransfers, sandboxTransfer } from './sandbox.js';

export interface DevPayOptions {
  /** Amount of the asset, as a decimal string; default: what is still owed. */
  readonly amount?: string;
  readonly asset?: string;
  /** Sandbox account index that pays (2–9 are funded payers). */
  readonly account?: number;
  /** Bind the transaction as the payer's page would (default true; never through a contract). */
  readonly bind?: boolean;
  /** Pay through the sandbox Multicall3, as a contract wallet or an exchange does (native coin: internal transfers). */
  readonly viaContract?: boolean;
}

export interface DevPayment {
  readonly sessionId: string;
  readonly txHash: string;
  readonly from: string;
  readonly to: string;
  readonly asset: AssetTicker;
  readonly amount: string;
  readonly chainId: string;
  /** Whether this call bound the transaction. */
  readonly bound: boolean;
  /** Why it was not bound, when it was not. */
  readonly notBoundBecause: string | null;
  /** Sent through a contract (no bind is tried: a contract's payer has no page to bind from). */
  readonly viaContract: boolean;
}

/** What one session is sent: to its wallet (its own address in deposit mode) on the sandbox. */
interface Planned {
  readonly sessionId: string;
  readonly to: string;
  readonly asset: AssetTicker;
  readonly token: NetworkToken | null;
  readonly decimals: number;
  readonly units: bigint;
}

/**
 * `kassa dev pay`: pays a session on the offline sandbox chain from a funded
 * account, then binds the transaction as a payer would. Development only.
 */
export async function devPay(ctx: DomainContext, id: string, options: DevPayOptions = {}): Promise<DevPayment> {
  return (await devPayBatch(ctx, [id], options))[0]!;
}

/**
 * Pays each session what it owes; several sessions only in one transaction through a contract (`kassa dev pay <id>…
 * --batch`), as an exchange batches its customers' withdrawals.
 */
export async function devPayBatch(
  ctx: DomainContext,
  ids: readonly string[],
  options: DevPayOptions = {},
): Promise<DevPayment[]> {
  const sessionIds = ids.map(checkSessionId);
  if (new Set(sessionIds).size !== sessionIds.length) throw invalid('each session can be paid once per batch');
  if (sessionIds.length > 1 && !options.viaContract)
    throw invalid('several sessions are paid in one transaction through a contract: give --batch');
  const local = ctx.networks.find((network) => network.slug === 'local');
  if (!local) throw invalid('kassa dev pay pays on the local sandbox network: enable it (KASSA_NETWORKS=local,…)');
  const url = local.rpcUrls[0];
  if (!url || (await rpcChainId(url)) !== local.chainId) {
    throw unavailable(
      `no sandbox chain answers at ${url ?? '(no RPC URL)'}: start Kassa in development mode (npm start) first`,
    );
  }
  const plans: Planned[] = [];
  for (const sessionId of sessionIds) plans.push(await plan(ctx, local, sessionId, options));
  const account = options.account ?? DEFAULT_PAYER_ACCOUNT;
  const chainId = String(local.chainId);
  if (options.viaContract) {
    const transfers = plans.map((p) => ({ to: p.to, tokenAddress: p.token?.address ?? null, baseUnits: p.units }));
    const sent = await sandboxContractTransfers(url, account, transfers, { chainId: local.chainId });
    if (sent.status !== 'success') throw unavailable(`the contract payment ${sent.hash} reverted on ${local.slug}`);
    return plans.map((p) => ({
      ...paymentOf(p, sent.hash, sent.from, chainId),
      bound: false,
      notBoundBecause: 'sent through a contract: found by the watcher, not bound',
      viaContract: true,
    }));
  }
  const [only] = plans;
  const transfer = await sandboxTransfer(url, account, only!.to, only!.token?.address ?? null, only!.units, {
    chainId: local.chainId,
  });
  const binding = await bindSent(ctx, only!, transfer.hash, transfer.from, chainId, options);
  return [{ ...paymentOf(only!, transfer.hash, transfer.from, chainId), ...binding, viaContract: false }];
}

function paymentOf(p: Planned, txHash: string, from: string, chainId: string) {
  // What went on chain, exactly (a 6-decimal token rounds the amount up to 6 digits).
  const amount = fromBaseUnits(p.units, p.decimals).toFixed();
  return { sessionId: p.sessionId, txHash, from, to: p.to, asset: p.asset, amount, chainId };
}

/** The session's wallet on the sandbox, the asset and exactly what to send (what is owed, unless --amount). */
async function plan(ctx: DomainContext, local: Network, sessionId: string, options: DevPayOptions): Promise<Planned> {
  const session = await ctx.store.sessions.findById(sessionId);
  if (!session) throw notFound(`Checkout session ${sessionId} not found`);
  const wallet = session.networks.find((network) => network.network === local.slug)?.walletAddress;
  if (!wallet)
    throw invalid(
      `checkout session ${sessionId} cannot be paid on ${local.slug}: its organisation has no wallet there`,
    );

  const onLocal = assetsOn(local);
  if (options.asset !== undefined && !isAssetTicker(options.asset))
    throw invalid(`--asset must be one of ${onLocal.join(', ')}`);
  if (options.asset && session.cryptoCurrency && options.asset !== session.cryptoCurrency) {
    throw invalid(`--asset ${options.asset} differs from ${session.cryptoCurrency}, already locked for this session`);
  }
  const asset =
    session.cryptoCurrency ??
    (options.asset as AssetTicker | undefined) ??
    session.quotes.find((q) => onLocal.includes(q.ticker))?.ticker;
  const quote = session.quotes.find((q) => q.ticker === asset);
  if (!asset || !quote || !onLocal.includes(asset)) {
    throw invalid(
      `${asset ?? 'no asset'} cannot pay this session on ${local.slug} (offered there: ${
        session.quotes
          .map((q) => q.ticker)
          .filter((t) => onLocal.includes(t))
          .join(', ') || 'none'
      })`,
    );
  }

  const token = local.tokens.find((t) => t.ticker === asset) ?? null;
  const decimals = token?.decimals ?? NATIVE_COIN_DECIMALS;
  let amount: Decimal;
  if (options.amount !== undefined) {
    if (!/^\d+(\.\d+)?$/.test(options.amount) || new Decimal(options.amount).isZero()) {
      throw invalid('--amount must be a positive decimal number, e.g. 0.00123456');
    }
    if (fractionalDigits(options.amount) > decimals)
      throw invalid(`--amount has more decimals than ${asset} has on ${local.slug} (${decimals})`);
    amount = new Decimal(options.amount);
  } else {
    if (isTerminal(session.status)) {
      throw invalid(
        `checkout session ${sessionId} is ${session.status}: nothing is owed (give --amount to send a late payment ` +
          `anyway)`,
      );
    }
    // Exactly what the payer's page asks for: quotes are whole units of the token (docs/payment-rules.md, rule 5).
    const owed = amountDue(session);
    amount = owed?.greaterThan(0) ? owed : quote.amount;
  }
  return { sessionId, to: wallet, asset, token, decimals, units: toBaseUnitsCeil(amount, decimals) };
}

/** Binds the sent transaction as the payer's page would; a refusal is reported, as the transfer is on chain. */
async function bindSent(
  ctx: DomainContext,
  p: Planned,
  txHash: string,
  from: string,
  chainId: string,
  options: DevPayOptions,
): Promise<{ bound: boolean; notBoundBecause: string | null }> {
  // A session may hold several bound transactions (a second one pays the rest after a partial payment);
  // a closed one takes a mined transfer inside its late-payment window, as a late payment.
  if (options.bind === false) return { bound: false, notBoundBecause: '--no-bind' };
  try {
    await bindTransaction(ctx, p.sessionId, {
      tx_hash: txHash,
      chain_id: chainId,
      crypto_currency: p.asset,
      payer_wallet_address: from,
    });
    return { bound: true, notBoundBecause: null };
  } catch (error) {
    // A refused bind (a first part under half, a closed session outside its late-payment window) is reported.
    if (!(error instanceof DomainError)) throw error;
    return { bound: false, notBoundBecause: error.message };
  }
}
