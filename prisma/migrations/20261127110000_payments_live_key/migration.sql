-- Found by review: a transfer re-included after a chain reorganisation at another log index
-- (another transaction before it in its new block) was recorded as a new payment, because a
-- reversed payment kept its (chain, tx hash, log index) and was revived only when it came
-- back under that same key. So an exact payment of one session could be credited to another
-- session given the same unique amount since, and a bound payment was never credited again.
-- Now a reversed payment is revived by what it is (chain, tx hash, token, recipient, base
-- units, in the order of the transaction's matching logs) at its new log index; for that, a
-- reversed row must not hold its old key. "live" is true while the payment is on the chain and
-- NULL once reversed: unique (chain_id, tx_hash, log_index, live) allows one live row per log
-- (NULLs are distinct), so a transfer is still counted once however many instances record it.

-- AlterTable
ALTER TABLE "payments" ADD COLUMN "live" BOOLEAN DEFAULT true;

UPDATE "payments" SET "live" = NULL WHERE "state" = 'reversed';

-- DropIndex
DROP INDEX "payments_chain_id_tx_hash_log_index_key";

-- CreateIndex
CREATE UNIQUE INDEX "payments_chain_id_tx_hash_log_index_live_key" ON "payments"("chain_id", "tx_hash", "log_index", "live");
