import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import {
  collectedAmount,
  fundsCollectedEvent,
  type DepositCollection,
  type DepositCollectionStore,
} from '../../domain/organisations/deposit-collections.js';
import { appendOutboxEvent } from '../outbox-event.store.js';

/** A deposit-mode session's address on one network and the wallet it leads to. */
export interface DepositSessionAddress {
  readonly sessionId: string;
  readonly depositAddress: string;
  readonly destination: string;
}

/**
 * The organisation's deposit-mode sessions on `network`, whatever their status (money may reach an address at any
 * time), oldest first.
 */
export async function depositAddressesOf(
  prisma: PrismaClient,
  organisationId: string,
  network: string,
): Promise<DepositSessionAddress[]> {
  const rows = await prisma.$queryRaw<Array<{ id: string; wallet_address: string; deposit_destination: string }>>`
    SELECT s.id, n.wallet_address, n.deposit_destination
      FROM checkout_sessions s
      JOIN checkout_session_networks n ON n.session_id = s.id
     WHERE s.organisation_id = ${organisationId}::uuid AND s.receiving_mode = 'deposit_addresses'
       AND n.network = ${network} AND n.deposit_destination IS NOT NULL
     ORDER BY s.created_at, s.id`;
  return rows.map((row) => ({
    sessionId: row.id,
    depositAddress: row.wallet_address,
    destination: row.deposit_destination,
  }));
}

/** The organisation's deposit-mode sessions on `network` whose address is one of `addresses` (lower-case). */
export async function depositSessionsAt(
  prisma: PrismaClient,
  organisationId: string,
  network: string,
  addresses: readonly string[],
): Promise<DepositSessionAddress[]> {
  if (addresses.length === 0) return [];
  const rows = await prisma.$queryRaw<Array<{ id: string; wallet_address: string; deposit_destination: string }>>`
    SELECT s.id, n.wallet_address, n.deposit_destination
      FROM checkout_session_networks n
      JOIN checkout_sessions s ON s.id = n.session_id
     WHERE n.network = ${network} AND n.wallet_address = ANY(${[...addresses]}::text[])
       AND n.deposit_destination IS NOT NULL AND s.organisation_id = ${organisationId}::uuid
       AND s.receiving_mode = 'deposit_addresses'`;
  return rows.map((row) => ({
    sessionId: row.id,
    depositAddress: row.wallet_address,
    destination: row.deposit_destination,
  }));
}

/** Collections with their rows and `funds.collected` event, each in one transaction; a repeat records nothing. */
export function depositCollectionStore(prisma: PrismaClient): DepositCollectionStore {
  return {
    async record(collection: DepositCollection, at: Date): Promise<boolean> {
      const event = fundsCollectedEvent(collection, at);
      return prisma.$transaction(async (tx) => {
        const inserted = await tx.$queryRaw<Array<{ id: string }>>`
          INSERT INTO deposit_collections
                 (id, organisation_id, network, chain_id, destination, tx_hash, block_number, gas_used, collected_at)
          VALUES (${collection.id}::uuid, ${collection.organisationId}::uuid, ${collection.network},
                  ${collection.chainId}, ${collection.destination}, ${collection.txHash}, ${collection.blockNumber},
                  ${collection.gasUsed}, ${collection.collectedAt})
          ON CONFLICT (network, tx_hash) DO NOTHING
          RETURNING id`;
        if (inserted.length === 0) return false;
        if (collection.items.length > 0) {
          await tx.$executeRaw`
            INSERT INTO deposit_collection_items
                   (collection_id, session_id, deposit_address, asset, token_address, amount, base_units)
            VALUES ${Prisma.join(
              collection.items.map(
                (item) =>
                  Prisma.sql`(${collection.id}::uuid, ${item.sessionId}::uuid, ${item.depositAddress}, ${item.asset},
                    ${item.tokenAddress}, ${collectedAmount(item).toFixed()}::numeric,
                    ${item.baseUnits.toString()}::numeric)`,
              ),
            )}`;
        }
        await appendOutboxEvent(tx, event);
        return true;
      });
    },
  };
}
