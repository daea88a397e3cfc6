import { isAssetTicker, type AssetTicker } from '../domain/shared/assets.js';
import { bindTransaction } from '../domain/payments/bind-transaction.js';
import { isTerminal } from '../domain/sessions/checkout-session.js';
import type { DomainContext } from '../domain/context.js';
import { DomainError, invalid, notFound, unavailable } from '../domain/shared/errors.js';
import { checkSessionId } from '../domain/sessions/get-checkout-session.js';
import { Decimal, fractionalDigits, fromBaseUnits, toBaseUnitsCeil } from '../domain/shared/money.js';
import { amountDue } from '../domain/sessions/session-amounts.js';
import { assetsOn, NATIVE_COIN_DECIMALS } from '../domain/shared/networks.js';
import { rpcChainId } from './anvil.js';
import { DEFAULT_PAYER_ACCOUNT, sandboxTransfer } from './sandbox.js';

export interface DevPayOptions {
  /** Amount of the asset, as a decimal string; default: what is still owed. */
  readonly amount?: string;
  readonly asset?: string;
  /** Sandbox account index that pays (2–9 are funded payers). */
  readonly account?: number;
  /** Bind the transaction as the payer's page would (default true). */
  readonly bind?: boolean;
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
}

/**
 * `kassa dev pay`: pays a session on the offline sandbox chain from a funded
 * account, then binds the transaction as a payer would. Development only.
 */
export async function devPay(ctx: DomainContext, id: string, options: DevPayOptions = {}): Promise<DevPayment> {
  const sessionId = checkSessionId(id);
  const local = ctx.networks.find((network) => network.slug === 'local');
  if (!local) throw invalid('kassa dev pay pays on the local sandbox network: enable it (KASSA_NETWORKS=local,…)');
  const url = local.rpcUrls[0];
  if (!url || (await rpcChainId(url)) !== local.chainId) {
    throw unavailable(
      `no sandbox chain answers at ${url ?? '(no RPC URL)'}: start Kassa in development mode (npm start) first`,
    );
  }
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
  const units = toBaseUnitsCeil(amount, decimals);
  const transfer = await sandboxTransfer(
    url,
    options.account ?? DEFAULT_PAYER_ACCOUNT,
    wallet,
    token?.address ?? null,
    units,
    { chainId: local.chainId },
  );

  let bound = false;
  // A session may hold several bound transactions (a second one pays the rest after a partial payment);
  // a closed one takes a mined transfer inside its late-payment window, as a late payment.
  let notBoundBecause = options.bind === false ? '--no-bind' : null;
  if (notBoundBecause === null) {
    try {
      await bindTransaction(ctx, sessionId, {
        tx_hash: transfer.hash,
        chain_id: String(local.chainId),
        crypto_currency: asset,
        payer_wallet_address: transfer.from,
      });
      bound = true;
    } catch (error) {
      // The transfer is on chain: a refused bind (a first part under half, a closed session outside its late-payment
      // window) is reported with its hash, not thrown.
      if (!(error instanceof DomainError)) throw error;
      notBoundBecause = error.message;
    }
  }
  return {
    sessionId,
    txHash: transfer.hash,
    from: transfer.from,
    to: wallet,
    asset,
    // What went on chain, exactly (a 6-decimal token rounds the amount up to 6 digits).
    amount: fromBaseUnits(units, decimals).toFixed(),
    chainId: String(local.chainId),
    bound,
    notBoundBecause: bound ? null : notBoundBecause,
  };
}
