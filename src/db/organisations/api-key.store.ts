import type { PrismaClient } from '../../generated/prisma/client.js';
import type { ApiKeyRecord, ApiKeyStore } from '../../domain/organisations/organisation-ports.js';

type ApiKeyRow = Omit<ApiKeyRecord, 'secretCiphertext'> & { secretCiphertext: string };

/** The record with its secret bound to the row it was read from (the AES-GCM additional data). */
function toApiKey(row: ApiKeyRow): ApiKeyRecord;
function toApiKey(row: ApiKeyRow | null): ApiKeyRecord | null;
function toApiKey(row: ApiKeyRow | null): ApiKeyRecord | null {
  return row && { ...row, secretCiphertext: { sealed: row.secretCiphertext, row: { table: 'api_keys', id: row.id } } };
}

export class PrismaApiKeyStore implements ApiKeyStore {
  constructor(private readonly prisma: PrismaClient) {}

  async create(input: {
    id: string;
    organisationId: string;
    publicKey: string;
    secretCiphertext: string;
    rotatedFromId?: string;
  }): Promise<ApiKeyRecord> {
    return toApiKey(await this.prisma.apiKey.create({ data: input }));
  }

  async findByPublicKey(publicKey: string): Promise<ApiKeyRecord | null> {
    return toApiKey(await this.prisma.apiKey.findUnique({ where: { publicKey } }));
  }

  async listForOrganisation(organisationId: string): Promise<ApiKeyRecord[]> {
    return (await this.prisma.apiKey.findMany({ where: { organisationId }, orderBy: { createdAt: 'asc' } })).map(
      (row) => toApiKey(row),
    );
  }

  async revoke(publicKey: string, at: Date): Promise<boolean> {
    const key = await this.prisma.apiKey.findUnique({ where: { publicKey } });
    if (!key) return false;
    if (!key.revokedAt) await this.prisma.apiKey.update({ where: { publicKey }, data: { revokedAt: at } });
    return true;
  }

  async expire(publicKey: string, graceMinutes: number): Promise<Date | null> {
    const rows = await this.prisma.$queryRaw<Array<{ expires_at: Date }>>`
      UPDATE api_keys SET expires_at = now() + make_interval(mins => ${graceMinutes}::integer)
       WHERE public_key = ${publicKey} AND expires_at IS NULL AND revoked_at IS NULL
      RETURNING expires_at`;
    return rows[0]?.expires_at ?? null;
  }

  async sample(): Promise<ApiKeyRecord | null> {
    return toApiKey(await this.prisma.apiKey.findFirst({ orderBy: { createdAt: 'desc' } }));
  }

  async touch(id: string, at: Date): Promise<void> {
    await this.prisma.apiKey.update({ where: { id }, data: { lastUsedAt: at } });
  }
}
