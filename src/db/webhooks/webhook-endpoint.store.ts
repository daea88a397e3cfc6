import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { WebhookEndpointPatch, WebhookEndpointRecord, WebhookStore } from '../../domain/webhooks/webhook-ports.js';
import { toEndpoint, WEBHOOK_TRANSACTION_OPTIONS } from './webhook-rows.js';

type Tx = Prisma.TransactionClient;
type EndpointStore = Pick<
  WebhookStore,
  'createEndpoint' | 'findEndpoint' | 'listEndpoints' | 'updateEndpoint' | 'deleteEndpoint'
>;

/**
 * Merchants' webhook endpoints. An endpoint receives the events written after it was created
 * (or re-enabled): `start_seq` is the outbox's newest seq at that moment.
 */
export function webhookEndpointStore(prisma: PrismaClient): EndpointStore {
  return {
    async createEndpoint(input, maxPerOrganisation) {
      return prisma.$transaction(async (tx) => {
        // NO KEY UPDATE: exclusive among endpoint creates, yet no wait for sessions' inserts, whose foreign key takes
        // KEY SHARE on the organisation (FOR UPDATE held every create of it, and a batch of creates with them).
        await tx.$executeRaw`SELECT 1 FROM organisations WHERE id = ${input.organisationId}::uuid FOR NO KEY UPDATE`;
        const held = await tx.webhookEndpoint.count({ where: { organisationId: input.organisationId } });
        if (held >= maxPerOrganisation) return null;
        const startSeq = await newestOutboxSeq(tx);
        const row = await tx.webhookEndpoint.create({
          data: {
            id: input.id,
            organisationId: input.organisationId,
            url: input.url,
            events: [...input.events],
            enabled: input.enabled,
            secretCiphertext: input.secretCiphertext,
            startSeq,
          },
        });
        return toEndpoint(row);
      }, WEBHOOK_TRANSACTION_OPTIONS);
    },

    async findEndpoint(id) {
      const row = await prisma.webhookEndpoint.findUnique({ where: { id } });
      return row ? toEndpoint(row) : null;
    },

    async listEndpoints(organisationId) {
      const orderBy = [{ createdAt: 'asc' as const }, { id: 'asc' as const }];
      const rows = await prisma.webhookEndpoint.findMany({ where: { organisationId }, orderBy });
      return rows.map(toEndpoint);
    },

    updateEndpoint(id, patch) {
      return prisma.$transaction((tx) => updateLocked(tx, id, patch), WEBHOOK_TRANSACTION_OPTIONS);
    },

    async deleteEndpoint(id) {
      const { count } = await prisma.webhookEndpoint.deleteMany({ where: { id } });
      return count > 0;
    },
  };
}

async function updateLocked(tx: Tx, id: string, patch: WebhookEndpointPatch): Promise<WebhookEndpointRecord | null> {
  const current = await tx.$queryRaw<Array<{ enabled: boolean; secret_ciphertext: string }>>`
    SELECT enabled, secret_ciphertext FROM webhook_endpoints WHERE id = ${id}::uuid FOR UPDATE`;
  if (current.length === 0) return null;
  // Re-enabled: deliver what happens from now on; what happened while disabled is in the events feed.
  const startSeq = patch.enabled === true && !current[0]!.enabled ? await newestOutboxSeq(tx) : undefined;
  const row = await tx.webhookEndpoint.update({
    where: { id },
    data: {
      ...(patch.url !== undefined ? { url: patch.url } : {}),
      ...(patch.events !== undefined ? { events: [...patch.events] } : {}),
      ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
      ...(patch.secretCiphertext !== undefined ? { secretCiphertext: patch.secretCiphertext } : {}),
      ...(patch.previousSecretCiphertext !== undefined
        ? { previousSecretCiphertext: patch.previousSecretCiphertext }
        : {}),
      ...(patch.rotateSecret ? { previousSecretCiphertext: current[0]!.secret_ciphertext } : {}),
      ...(patch.previousSecretExpiresAt !== undefined
        ? { previousSecretExpiresAt: patch.previousSecretExpiresAt }
        : {}),
      ...(startSeq !== undefined ? { startSeq } : {}),
      updatedAt: new Date(),
    },
  });
  return toEndpoint(row);
}

async function newestOutboxSeq(tx: Tx): Promise<bigint> {
  const [row] = await tx.$queryRaw<Array<{ max: bigint | null }>>`SELECT max(seq) AS max FROM outbox_events`;
  return row?.max === null || row?.max === undefined ? 0n : BigInt(row.max);
}
