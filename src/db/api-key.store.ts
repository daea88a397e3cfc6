import type { PrismaClient } from '../generated/prisma/client.js';
import type { ApiKeyRecord, ApiKeyStore } from '../domain/ports.js';

export class PrismaApiKeyStore implements ApiKeyStore {
  constructor(private readonly prisma: PrismaClient) {}

  create(input: { id: string; organisationId: string; publicKey: string; secretCiphertext: string; rotatedFromId?: string }): Promise<ApiKeyRecord> {
    return this.prisma.apiKey.create({ data: input });
  }

  findByPublicKey(publicKey: string): Promise<ApiKeyRecord | null> {
    return this.prisma.apiKey.findUnique({ where: { publicKey } });
  }

  listForOrganisation(organisationId: string): Promise<ApiKeyRecord[]> {
    return this.prisma.apiKey.findMany({ where: { organisationId }, orderBy: { createdAt: 'asc' } });
  }

  async revoke(publicKey: string, at: Date): Promise<boolean> {
    const key = await this.prisma.apiKey.findUnique({ where: { publicKey } });
    if (!key) return false;
    if (!key.revokedAt) await this.prisma.apiKey.update({ where: { publicKey }, data: { revokedAt: at } });
    return true;
  }

  async expire(publicKey: string, at: Date): Promise<void> {
    await this.prisma.apiKey.update({ where: { publicKey }, data: { expiresAt: at } });
  }

  sample(): Promise<ApiKeyRecord | null> {
    return this.prisma.apiKey.findFirst({ orderBy: { createdAt: 'desc' } });
  }

  async touch(id: string, at: Date): Promise<void> {
    await this.prisma.apiKey.update({ where: { id }, data: { lastUsedAt: at } });
  }
}
