import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { walletTaken } from '../../domain/organisations/organisations.js';
import type { Organisation, OrganisationStore, ReceivingMode } from '../../domain/organisations/organisation-ports.js';
import type {
  Branding,
  BrandingStore,
  LogoContentType,
  StoredLogo,
} from '../../domain/organisations/branding-ports.js';
import { toDecimal } from '../../domain/shared/money.js';
import { isUuid } from '../../domain/shared/uuid.js';

type OrganisationRow = Omit<NonNullable<Awaited<ReturnType<PrismaClient['organisation']['findFirst']>>>, 'logo'> & {
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
    receivingMode: row.receivingMode as ReceivingMode,
    createdAt: row.createdAt,
  };
}

// The logo (up to 100 KB) is read only when served: never with the organisation on hot paths such as create.
const WITHOUT_LOGO = { logo: true } as const;

export class PrismaOrganisationStore implements OrganisationStore, BrandingStore {
  constructor(private readonly prisma: PrismaClient) {}

  async create(input: {
    id: string;
    name: string;
    wallets: Record<string, string>;
    receivingMode?: ReceivingMode;
  }): Promise<Organisation> {
    const row = await walletUnique(input.wallets, () =>
      this.prisma.organisation.create({
        data: {
          id: input.id,
          name: input.name,
          receivingMode: input.receivingMode,
          wallets: { create: Object.entries(input.wallets).map(([network, address]) => ({ network, address })) },
        },
        include: { wallets: { orderBy: { network: 'asc' } } },
        omit: WITHOUT_LOGO,
      }),
    );
    return toOrganisation(row);
  }

  async findById(id: string): Promise<Organisation | null> {
    // Not a UUID cannot exist; asking PostgreSQL would be an error instead of "not found".
    if (!isUuid(id)) return null;
    const row = await this.prisma.organisation.findUnique({
      where: { id },
      include: { wallets: { orderBy: { network: 'asc' } } },
      omit: WITHOUT_LOGO,
    });
    return row ? toOrganisation(row) : null;
  }

  async list(): Promise<Organisation[]> {
    const rows = await this.prisma.organisation.findMany({
      include: { wallets: { orderBy: { network: 'asc' } } },
      omit: WITHOUT_LOGO,
      orderBy: { createdAt: 'asc' },
    });
    return rows.map(toOrganisation);
  }

  async setWallet(organisationId: string, network: string, address: string): Promise<void> {
    await walletUnique({ [network]: address }, () =>
      this.prisma.organisationWallet.upsert({
        where: { organisationId_network: { organisationId, network } },
        create: { organisationId, network, address },
        update: { address, updatedAt: new Date() },
      }),
    );
  }

  async walletOwner(network: string, address: string): Promise<string | null> {
    // Every wallet the organisation ever had, not only its current one (docs/decisions/0015).
    const row = await this.prisma.walletOwner.findUnique({
      where: { network_address: { network, address: address.toLowerCase() } },
    });
    return row?.organisationId ?? null;
  }

  async setPaymentPolicy(
    organisationId: string,
    policy: {
      underpaymentTolerancePercent?: { toFixed(): string };
      latePaymentWindowMinutes?: number;
      receivingMode?: ReceivingMode;
    },
  ): Promise<void> {
    await this.prisma.organisation.update({
      where: { id: organisationId },
      data: {
        underpaymentTolerancePercent: policy.underpaymentTolerancePercent?.toFixed(),
        latePaymentWindowMinutes: policy.latePaymentWindowMinutes,
        receivingMode: policy.receivingMode,
      },
    });
  }

  async brandingOf(organisationId: string): Promise<Branding | null> {
    if (!isUuid(organisationId)) return null;
    const row = await this.prisma.organisation.findUnique({
      where: { id: organisationId },
      select: { name: true, brandColor: true, logoSha256: true },
    });
    return row ? { organisationName: row.name, brandColor: row.brandColor, logoSha256: row.logoSha256 } : null;
  }

  async setBranding(
    organisationId: string,
    change: { brandColor?: string | null; logo?: (StoredLogo & { sha256: string }) | null },
  ): Promise<boolean> {
    if (!isUuid(organisationId)) return false;
    const logo =
      change.logo === undefined
        ? {}
        : change.logo === null
          ? { logo: null, logoContentType: null, logoSha256: null }
          : {
              logo: new Uint8Array(change.logo.bytes),
              logoContentType: change.logo.contentType,
              logoSha256: change.logo.sha256,
            };
    const { count } = await this.prisma.organisation.updateMany({
      where: { id: organisationId },
      data: { ...(change.brandColor !== undefined ? { brandColor: change.brandColor } : {}), ...logo },
    });
    return count === 1;
  }

  async logoBySha256(sha256: string): Promise<StoredLogo | null> {
    const row = await this.prisma.organisation.findFirst({
      where: { logoSha256: sha256, logo: { not: null } },
      select: { logo: true, logoContentType: true },
    });
    return row?.logo ? { bytes: Buffer.from(row.logo), contentType: row.logoContentType as LogoContentType } : null;
  }
}

/** A concurrent writer took the wallet first: the unique index says so, in the domain's words. */
async function walletUnique<T>(wallets: Record<string, string>, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') {
      const [network, address] = Object.entries(wallets)[0] ?? ['?', '?'];
      throw walletTaken(address, network);
    }
    throw error;
  }
}
