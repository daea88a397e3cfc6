import { judgeBound } from '../domain/payments/bound-transaction-verdicts.js';
import { judgeBoundTransaction } from '../domain/payments/bound-transactions.js';
import type { BoundTxEvidence } from '../domain/payments/chain-ports.js';
import { readEvidence } from './transaction-evidence.js';
import type { WatchedNetwork } from './watched-network.js';

/** Bound transactions judged per pass and network, the least recently checked first. */
const BOUND_TRANSACTIONS_PER_PASS = 50;

/** Another enabled network that knows `hash`, for the reason a missing transaction is rejected with. */
export type FindElsewhere = (hash: string) => Promise<{ slug: string; chainId: number } | null>;

/**
 * Bound transactions are judged from their own receipt (docs/payment-rules.md, rule 3), each in a transaction that
 * locks its session first; settling the sessions it changed is left to settle-changed-sessions.ts.
 */
export async function checkBoundTransactions(
  watched: WatchedNetwork,
  head: bigint,
  droppedAfterMinutes: number,
  findElsewhere: FindElsewhere,
): Promise<void> {
  const { ctx, network } = watched;
  const unverified = await ctx.store.chain.boundTransactionsToCheck(watched.chainId, BOUND_TRANSACTIONS_PER_PASS);
  for (const bound of unverified) {
    const evidence = await evidenceOf(watched, bound.txHash, head, findElsewhere);
    const now = ctx.clock();
    await ctx.store.transaction(async (tx) => {
      const session = await tx.lockSession(bound.sessionId);
      const current = session && (await tx.transactionsOfSession(session.id)).find((t) => t.id === bound.id);
      if (!session || current?.state !== 'unverified') return;
      const verdict = judgeBoundTransaction(session, current, network, evidence, now, droppedAfterMinutes);
      const outcome = await judgeBound(ctx, tx, session, current, verdict, now);
      if (outcome.state === 'rejected') {
        const rejected = { network: network.slug, sessionId: session.id, reason: outcome.reason };
        watched.logger.info(rejected, 'bound transaction rejected');
      }
    });
  }
}

/** What the bound chain says about the transaction; when it does not know it, whether another network does. */
async function evidenceOf(
  watched: WatchedNetwork,
  txHash: string,
  head: bigint,
  findElsewhere: FindElsewhere,
): Promise<BoundTxEvidence> {
  const evidence = await readEvidence(watched.rpc, txHash, head);
  if (evidence.kind === 'missing') return { kind: 'missing', foundOn: await findElsewhere(txHash) };
  return evidence;
}
