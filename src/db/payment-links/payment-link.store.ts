import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { toDecimal } from '../../domain/shared/money.js';
import type {
  IdentityOption,
  PaymentLink,
  PaymentLinkPatch,
  PaymentLinkStore,
} from '../../domain/payment-links/payment-link.js';
import { isUuid } from '../../domain/shared/uuid.js';
import { installationSecret } from '../organisations/installation-secrets.js';

const INCLUDE = { items: { orderBy: { position: 'asc' } } } as const;
type Row = Prisma.PaymentLinkGetPayload<{ include: typeof INCLUDE }>;

function toPaymentLink(row: Row): PaymentLink {
  return {
    id: row.id,
    organisationId: row.organisationId,
    name: row.name,
    currency: row.currency,
    items: row.items.map((item) => ({
      name: item.name,
      quantity: item.quantity,
      unitPrice: toDecimal(item.unitPrice),
      productId: item.productId,
    })),
    amountMin: row.amountMin === null ? null : toDecimal(row.amountMin),
    amountMax: row.amountMax === null ? null : toDecimal(row.amountMax),
    expiresInMinutes: row.expiresInMinutes,
    identityOptions: row.identityOptions as IdentityOption[],
    anonymous: row.anonymous,
    maxUses: row.maxUses,
    uses: row.uses,
    active: row.active,
    expiresAt: row.expiresAt,
    metadata: (row.metadata ?? {}) as Record<string, unknown>,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/**
 * Payment links over Prisma; a use is taken by create's conditional UPDATE and given back by a trigger when a session
 * of the link closes unpaid (docs/decisions/0016).
 */
export class PrismaPaymentLinkStore implements PaymentLinkStore {
  /** The key of payer ids (payerId): the installation secret `payer_id`. */
  readonly payerIdKey: () => Promise<Buffer>;

  constructor(private readonly prisma: PrismaClient) {
    this.payerIdKey = installationSecret(prisma, 'payer_id');
  }

  async insert(link: PaymentLink): Promise<void> {
    await this.prisma.paymentLink.create({
      data: {
        id: link.id,
        organisationId: link.organisationId,
        name: link.name,
        currency: link.currency,
        amountMin: link.amountMin?.toFixed() ?? null,
        amountMax: link.amountMax?.toFixed() ?? null,
        expiresInMinutes: link.expiresInMinutes,
        identityOptions: [...link.identityOptions],
        anonymous: link.anonymous,
        maxUses: link.maxUses,
        uses: link.uses,
        active: link.active,
        expiresAt: link.expiresAt,
        metadata: link.metadata as Prisma.InputJsonObject,
        createdAt: link.createdAt,
        updatedAt: link.updatedAt,
        items: {
          create: link.items.map((item, position) => ({
            position,
            name: item.name,
            quantity: item.quantity,
            unitPrice: item.unitPrice.toFixed(),
            productId: item.productId,
          })),
        },
      },
    });
  }

  async findById(id: string): Promise<PaymentLink | null> {
    if (!isUuid(id)) return null;
    const row = await this.prisma.paymentLink.findUnique({ where: { id }, include: INCLUDE });
    return row ? toPaymentLink(row) : null;
  }

  async listForOrganisation(organisationId: string): Promise<PaymentLink[]> {
    if (!isUuid(organisationId)) return [];
    const rows = await this.prisma.paymentLink.findMany({
      where: { organisationId },
      include: INCLUDE,
      orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
    });
    return rows.map(toPaymentLink);
  }

  async update(id: string, patch: PaymentLinkPatch, at: Date): Promise<PaymentLink | null> {
    const { count } = await this.prisma.paymentLink.updateMany({
      where: { id },
      data: {
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(patch.active !== undefined ? { active: patch.active } : {}),
        ...(patch.maxUses !== undefined ? { maxUses: patch.maxUses } : {}),
        ...(patch.expiresAt !== undefined ? { expiresAt: patch.expiresAt } : {}),
        ...(patch.metadata !== undefined ? { metadata: patch.metadata as Prisma.InputJsonObject } : {}),
        updatedAt: at,
      },
    });
    return count === 0 ? null : this.findById(id);
  }
}
