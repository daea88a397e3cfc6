import type { PrismaClient } from '../generated/prisma/client.js';
import type { Organisation, OrganisationStore } from '../domain/ports.js';
import { toDecimal } from '../domain/money.js';
import { isUuid } from '../domain/uuid.js';

type OrganisationRow = NonNullable<Awaited<ReturnType<PrismaClient['organisation']['findFirst']>>> & {
  wallets: Array<{ network: string; address: string }>;
};

function toOrganisation(row: OrganisationRow): Organisation {
  return {
    id: row.id,
    name: row.name,
    deleted: row.deletedAt !== null,
    underpaymentTolerancePercent: toDecimal(row.underpaymentTolerancePercent),
    latePaymentWindowMinutes: row.latePaymentWindowMinutes,
    wallets: Object.fromEntries(row.wallets.map((w) => [w.network, w.address])),
    createdAt: row.createdAt,
  };
}

export class PrismaOrganisationStore implements OrganisationStore {
  constructor(private readonly prisma: PrismaClient) {}

  async create(input: { id: string; name: string; wallets: Record<string, string> }): Promise<Organisation> {
    const row = await this.prisma.organisation.create({
      data: {
        id: input.id,
        name: input.name,
        wallets: { create: Object.entries(input.wallets).map(([network, address]) => ({ network, address })) },
      },
      include: { wallets: true },
    });
    return toOrganisation(row);
  }

  async findById(id: string): Promise<Organisation | null> {
    // Not a UUID cannot exist; asking PostgreSQL would be an error instead of "not found".
    if (!isUuid(id)) return null;
    const row = await this.prisma.organisation.findUnique({ where: { id }, include: { wallets: true } });
    return row ? toOrganisation(row) : null;
  }

  async list(): Promise<Organisation[]> {
    const rows = await this.prisma.organisation.findMany({ include: { wallets: true }, orderBy: { createdAt: 'asc' } });
    return rows.map(toOrganisation);
  }

  async setWallet(organisationId: string, network: string, address: string): Promise<void> {
    await this.prisma.organisationWallet.upsert({
      where: { organisationId_network: { organisationId, network } },
      create: { organisationId, network, address },
      update: { address, updatedAt: new Date() },
    });
  }

  async setPaymentPolicy(organisationId: string, policy: { underpaymentTolerancePercent?: { toFixed(): string }; latePaymentWindowMinutes?: number }): Promise<void> {
    await this.prisma.organisation.update({
      where: { id: organisationId },
      data: { underpaymentTolerancePercent: policy.underpaymentTolerancePercent?.toFixed(), latePaymentWindowMinutes: policy.latePaymentWindowMinutes },
    });
  }
}
