import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type {
  AuditRecord,
  DashboardLinkKind,
  DashboardStore,
  DashboardUserRecord,
  DashboardWrites,
  MembershipRecord,
  PasskeyRecord,
} from '../../domain/dashboard/dashboard-ports.js';
import type { DashboardRole } from '../../domain/dashboard/roles.js';
import { createDashboardSessionReader } from './session-list.store.js';

type Client = PrismaClient | Prisma.TransactionClient;

const TRANSACTION_OPTIONS = { maxWait: 20_000, timeout: 30_000 } as const;

function toUser(row: DashboardUserRecord | null): DashboardUserRecord | null {
  return (
    row && {
      id: row.id,
      email: row.email,
      passwordHash: row.passwordHash,
      disabledAt: row.disabledAt,
      createdAt: row.createdAt,
    }
  );
}

function toPasskey(row: {
  id: string;
  userId: string;
  credentialId: string;
  publicKey: Uint8Array;
  signCount: bigint;
  transports: string[];
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}): PasskeyRecord {
  return {
    id: row.id,
    userId: row.userId,
    credentialId: row.credentialId,
    publicKey: new Uint8Array(row.publicKey),
    signCount: Number(row.signCount),
    transports: row.transports,
    name: row.name,
    createdAt: row.createdAt,
    lastUsedAt: row.lastUsedAt,
  };
}

function toMembership(row: {
  organisationId: string;
  userId: string;
  role: string;
  organisation: { name: string };
}): MembershipRecord {
  return {
    organisationId: row.organisationId,
    organisationName: row.organisation.name,
    userId: row.userId,
    role: row.role as DashboardRole,
  };
}

/** The dashboard's accounts over Prisma (docs/dashboard.md); `client` is the client or an open transaction. */
function dashboardWrites(client: Client): DashboardWrites {
  return {
    async findUserByEmail(email) {
      return toUser(await client.dashboardUser.findUnique({ where: { email } }));
    },
    async findUserById(id) {
      return toUser(await client.dashboardUser.findUnique({ where: { id } }));
    },
    async insertUser(user) {
      await client.dashboardUser.create({ data: user });
    },
    async setPassword(userId, passwordHash) {
      await client.dashboardUser.update({ where: { id: userId }, data: { passwordHash } });
    },
    async disableUser(userId, at) {
      await client.dashboardUser.update({ where: { id: userId }, data: { disabledAt: at } });
    },
    async membership(organisationId, userId) {
      const row = await client.dashboardMembership.findUnique({
        where: { organisationId_userId: { organisationId, userId } },
        include: { organisation: { select: { name: true } } },
      });
      return row && toMembership(row);
    },
    async membershipsOf(userId) {
      const rows = await client.dashboardMembership.findMany({
        where: { userId, organisation: { deletedAt: null } },
        include: { organisation: { select: { name: true } } },
        orderBy: { createdAt: 'asc' },
      });
      return rows.map(toMembership);
    },
    async membersOf(organisationId) {
      const rows = await client.dashboardMembership.findMany({
        where: { organisationId },
        include: { organisation: { select: { name: true } }, user: true },
        orderBy: { createdAt: 'asc' },
      });
      return rows.map((row) => ({ ...toMembership(row), user: toUser(row.user)! }));
    },
    async insertMembership(membership) {
      await client.dashboardMembership.create({ data: membership });
    },
    async insertLink(link) {
      await client.dashboardLink.create({ data: link });
    },
    async retireLinks(userId, kind, at) {
      await client.dashboardLink.updateMany({ where: { userId, kind, usedAt: null }, data: { usedAt: at } });
    },
    async claimLink(tokenHash, kind, now) {
      // One statement: of two requests with the same link, one claims it.
      const rows = await client.$queryRaw<
        Array<{ id: string; kind: string; user_id: string; organisation_id: string; expires_at: Date }>
      >`UPDATE dashboard_links SET used_at = ${now}
         WHERE token_hash = ${tokenHash} AND kind = ${kind}::dashboard_link_kind
           AND used_at IS NULL AND expires_at > ${now}
        RETURNING id, kind, user_id, organisation_id, expires_at`;
      const row = rows[0];
      return row
        ? {
            id: row.id,
            kind: row.kind as DashboardLinkKind,
            userId: row.user_id,
            organisationId: row.organisation_id,
            expiresAt: row.expires_at,
          }
        : null;
    },
    async insertSession(session) {
      await client.dashboardSession.create({ data: session });
    },
    async findSession(tokenHash) {
      const row = await client.dashboardSession.findUnique({ where: { tokenHash } });
      return (
        row && {
          id: row.id,
          userId: row.userId,
          csrfToken: row.csrfToken,
          createdAt: row.createdAt,
          lastSeenAt: row.lastSeenAt,
          expiresAt: row.expiresAt,
        }
      );
    },
    async touchSession(id, lastSeenAt, expiresAt) {
      const { count } = await client.dashboardSession.updateMany({ where: { id }, data: { lastSeenAt, expiresAt } });
      return count > 0;
    },
    async deleteSession(id) {
      await client.dashboardSession.deleteMany({ where: { id } });
    },
    async deleteSessionsOf(userId) {
      return (await client.dashboardSession.deleteMany({ where: { userId } })).count;
    },
    async failuresSince(since, by) {
      const where = { ...by, createdAt: { gt: since } };
      const result = await client.dashboardSignInFailure.aggregate({ where, _count: true, _min: { createdAt: true } });
      return { count: result._count, oldest: result._min.createdAt };
    },
    async recordFailure(email, address) {
      await client.dashboardSignInFailure.create({ data: { email, address } });
    },
    async clearFailures(email) {
      await client.dashboardSignInFailure.deleteMany({ where: { email } });
    },
    async audit(entry) {
      await client.dashboardAuditEntry.create({ data: { ...entry, details: { ...entry.details } } });
    },
    async insertPasskeyChallenge(challenge) {
      await client.dashboardPasskeyChallenge.create({ data: challenge });
    },
    async takePasskeyChallenge(challenge, ceremony, now) {
      // One statement: of two requests with the same challenge, one takes it.
      const rows = await client.$queryRaw<Array<{ user_id: string | null }>>`
        DELETE FROM dashboard_passkey_challenges
         WHERE challenge = ${challenge} AND ceremony = ${ceremony}::dashboard_passkey_ceremony AND expires_at > ${now}
        RETURNING user_id`;
      return rows[0] ? { userId: rows[0].user_id } : null;
    },
    async insertPasskey(passkey) {
      await client.dashboardPasskey.create({
        data: {
          ...passkey,
          publicKey: Buffer.from(passkey.publicKey),
          signCount: BigInt(passkey.signCount),
          transports: [...passkey.transports],
        },
      });
    },
    async passkeysOf(userId) {
      const rows = await client.dashboardPasskey.findMany({ where: { userId }, orderBy: { createdAt: 'asc' } });
      return rows.map(toPasskey);
    },
    async findPasskeyByCredentialId(credentialId) {
      const row = await client.dashboardPasskey.findUnique({ where: { credentialId } });
      return row && toPasskey(row);
    },
    async passkeyUsed(id, signCount, at) {
      await client.dashboardPasskey.updateMany({
        where: { id },
        data: { signCount: BigInt(signCount), lastUsedAt: at },
      });
    },
    async deletePasskey(id, userId) {
      const row = await client.dashboardPasskey.findFirst({ where: { id, ...(userId ? { userId } : {}) } });
      if (!row) return null;
      const { count } = await client.dashboardPasskey.deleteMany({ where: { id } });
      return count > 0 ? toPasskey(row) : null;
    },
    async redeliverFailedWebhooks(organisationId, giveUpHours) {
      const rows = await client.$queryRaw<Array<{ id: string }>>`
        UPDATE webhook_deliveries d
        SET status = 'pending', next_attempt_at = now(), give_up_at = now() + ${giveUpHours} * interval '1 hour',
            locked_until = NULL, lease_token = NULL, updated_at = now()
        FROM webhook_endpoints ep
        WHERE ep.id = d.endpoint_id AND ep.organisation_id = ${organisationId}::uuid AND ep.enabled
          AND d.status = 'failed'
        RETURNING d.id`;
      return rows.map((row) => row.id);
    },
    async auditLog(organisationId, limit, before) {
      const rows = await client.dashboardAuditEntry.findMany({
        where: { organisationId, ...(before ? { id: { lt: BigInt(before) } } : {}) },
        orderBy: { id: 'desc' },
        take: limit,
      });
      const userIds = [...new Set(rows.map((row) => row.userId).filter((id): id is string => id !== null))];
      const users = await client.dashboardUser.findMany({
        where: { id: { in: userIds } },
        select: { id: true, email: true },
      });
      const emails = new Map(users.map((user) => [user.id, user.email]));
      return rows.map((row): AuditRecord => ({
        id: row.id.toString(),
        organisationId: row.organisationId,
        userId: row.userId,
        userEmail: row.userId ? (emails.get(row.userId) ?? null) : null,
        action: row.action,
        details: row.details as AuditRecord['details'],
        address: row.address,
        createdAt: row.createdAt,
      }));
    },
  };
}

export function createDashboardStore(prisma: PrismaClient): DashboardStore {
  return {
    ...dashboardWrites(prisma),
    sessions: createDashboardSessionReader(prisma),
    async purge({ failuresBefore, sessionsExpiredBefore, linksBefore, webhookResponsesBefore }) {
      const failures = await prisma.dashboardSignInFailure.deleteMany({ where: { createdAt: { lt: failuresBefore } } });
      const sessions = await prisma.dashboardSession.deleteMany({
        where: { expiresAt: { lt: sessionsExpiredBefore } },
      });
      const links = await prisma.dashboardLink.deleteMany({
        where: { OR: [{ usedAt: { lt: linksBefore } }, { expiresAt: { lt: linksBefore } }] },
      });
      const challenges = await prisma.dashboardPasskeyChallenge.deleteMany({
        where: { expiresAt: { lt: sessionsExpiredBefore } },
      });
      // The excerpt stays; an answer longer than it is marked truncated, since only its start is left.
      const responses = await prisma.$executeRaw`
        UPDATE webhook_delivery_attempts
           SET response_truncated = response_truncated
                 OR octet_length(response_body) > octet_length(coalesce(response_excerpt, '')),
               response_body = NULL, response_headers = NULL
         WHERE created_at < ${webhookResponsesBefore}
           AND (response_body IS NOT NULL OR response_headers IS NOT NULL)`;
      return failures.count + sessions.count + links.count + challenges.count + responses;
    },
    transaction: (work) => prisma.$transaction((tx) => work(dashboardWrites(tx)), TRANSACTION_OPTIONS),
  };
}
