-- The delivery claim asks, per endpoint, whether a batch is in flight (a pending delivery leased until later), and now
-- counts that per organisation to give organisations turns (src/db/webhook-delivery-queue.store.ts). Before, a
-- pending backlog of one endpoint was read row by row for it.
CREATE INDEX "webhook_deliveries_endpoint_id_status_locked_until_idx" ON "webhook_deliveries"("endpoint_id", "status", "locked_until");
