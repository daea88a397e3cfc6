import type { PrismaClient } from '../../generated/prisma/client.js';
import type { StoredSecretsPort } from '../../domain/organisations/master-key-rotation.js';
import type { StoredSecret } from '../../domain/shared/secret-box.js';

type Column = 'secret_ciphertext' | 'previous_secret_ciphertext';
type Located = StoredSecret & { readonly column: Column };

/** Every stored secret: api_keys.secret_ciphertext and webhook_endpoints' current and previous secrets. */
export function createStoredSecretsStore(prisma: PrismaClient): StoredSecretsPort {
  return {
    async countV1() {
      const [row] = await prisma.$queryRaw<Array<{ count: number }>>`
        SELECT ((SELECT count(*) FROM api_keys WHERE secret_ciphertext LIKE 'v1.%')
          + (SELECT count(*) FROM webhook_endpoints WHERE secret_ciphertext LIKE 'v1.%')
          + (SELECT count(*) FROM webhook_endpoints WHERE previous_secret_ciphertext LIKE 'v1.%'))::int AS count`;
      return row?.count ?? 0;
    },
    async resealAll(reseal) {
      return prisma.$transaction(
        async (tx) => {
          // Locked, so no key or endpoint changes its secret between reading and writing back.
          const keys = await tx.$queryRaw<Array<{ id: string; sealed: string }>>`
            SELECT id::text, secret_ciphertext AS sealed FROM api_keys ORDER BY id FOR UPDATE`;
          const endpoints = await tx.$queryRaw<Array<{ id: string; sealed: string; previous: string | null }>>`
            SELECT id::text, secret_ciphertext AS sealed, previous_secret_ciphertext AS previous
              FROM webhook_endpoints ORDER BY id FOR UPDATE`;
          const secrets: Located[] = [
            ...keys.map((row) => ({
              sealed: row.sealed,
              row: { table: 'api_keys' as const, id: row.id },
              column: 'secret_ciphertext' as const,
            })),
            ...endpoints.flatMap((row) => [
              {
                sealed: row.sealed,
                row: { table: 'webhook_endpoints' as const, id: row.id },
                column: 'secret_ciphertext' as const,
              },
              ...(row.previous === null
                ? []
                : [
                    {
                      sealed: row.previous,
                      row: { table: 'webhook_endpoints' as const, id: row.id },
                      column: 'previous_secret_ciphertext' as const,
                    },
                  ]),
            ]),
          ];
          const replacements = reseal(secrets);
          for (const secret of secrets) {
            const next = replacements.get(secret);
            if (next === undefined) continue;
            if (secret.row.table === 'api_keys') {
              await tx.$executeRaw`UPDATE api_keys SET secret_ciphertext = ${next} WHERE id = ${secret.row.id}::uuid`;
            } else if (secret.column === 'secret_ciphertext') {
              await tx.$executeRaw`UPDATE webhook_endpoints SET secret_ciphertext = ${next}
                WHERE id = ${secret.row.id}::uuid`;
            } else {
              await tx.$executeRaw`UPDATE webhook_endpoints SET previous_secret_ciphertext = ${next}
                WHERE id = ${secret.row.id}::uuid`;
            }
          }
          return secrets;
        },
        { maxWait: 20_000, timeout: 120_000 },
      );
    },
  };
}
