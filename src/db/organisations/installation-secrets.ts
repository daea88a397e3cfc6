import { randomBytes } from 'node:crypto';
import type { PrismaClient } from '../../generated/prisma/client.js';

/**
 * A random secret of this installation by name (`installation_secrets`): made once by whichever instance needs it
 * first, the same for every instance after. Read once per process; a failed read is tried again.
 */
export function installationSecret(prisma: PrismaClient, name: string): () => Promise<Buffer> {
  let secret: Promise<Buffer> | null = null;
  return () => {
    secret ??= read(prisma, name).catch((error: unknown) => {
      secret = null;
      throw error;
    });
    return secret;
  };
}

async function read(prisma: PrismaClient, name: string): Promise<Buffer> {
  // INSERT … ON CONFLICT DO NOTHING: of instances racing on first use, one writes and all read its secret.
  await prisma.installationSecret.createMany({ data: [{ name, secret: randomBytes(32) }], skipDuplicates: true });
  const row = await prisma.installationSecret.findUniqueOrThrow({ where: { name } });
  return Buffer.from(row.secret);
}
