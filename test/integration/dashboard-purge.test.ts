import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeDashboardRecords } from '../../src/domain/dashboard/purge.js';
import { createMerchant } from '../factories/merchant.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';

/** The hourly dashboard purge (src/domain/dashboard/purge.ts) on PostgreSQL: what it deletes and what it keeps. */

let kassa: TestKassa;

beforeAll(async () => {
  kassa = await startTestKassa();
});

afterAll(async () => {
  await kassa?.close();
});

describe('the dashboard purge', () => {
  it('deletes old failures, ended sessions and old links; keeps live ones and the audit log', async () => {
    const prisma = kassa.runtime.db.prisma;
    const { organisationId } = await createMerchant(kassa.ctx);
    const userId = randomUUID();
    await prisma.dashboardUser.create({ data: { id: userId, email: `purge-${userId}@example.com` } });
    const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000);
    const session = (expiresAt: Date) => ({
      id: randomUUID(),
      tokenHash: randomUUID(),
      userId,
      csrfToken: 'x',
      address: '127.0.0.1',
      expiresAt,
    });
    const link = (fields: { expiresAt: Date; usedAt?: Date }) => ({
      id: randomUUID(),
      tokenHash: randomUUID(),
      kind: 'invite' as const,
      userId,
      organisationId,
      ...fields,
    });
    const [oldFailure, newFailure] = [ago(16), ago(1)];
    await prisma.dashboardSignInFailure.createMany({
      data: [
        { email: 'a@example.com', address: '1.2.3.4', createdAt: oldFailure },
        { email: 'a@example.com', address: '1.2.3.4', createdAt: newFailure },
      ],
    });
    const ended = session(ago(1));
    const live = session(ago(-60));
    await prisma.dashboardSession.createMany({ data: [ended, live] });
    const usedLongAgo = link({ expiresAt: ago(-60), usedAt: ago(25 * 60) });
    const expiredLongAgo = link({ expiresAt: ago(25 * 60) });
    const usedRecently = link({ expiresAt: ago(-60), usedAt: ago(5) });
    const open = link({ expiresAt: ago(-60) });
    await prisma.dashboardLink.createMany({ data: [usedLongAgo, expiredLongAgo, usedRecently, open] });
    await prisma.dashboardAuditEntry.create({
      data: { organisationId, action: 'user.invited', createdAt: ago(10_000) },
    });

    expect(await purgeDashboardRecords(kassa.ctx)).toBe(4);
    expect((await prisma.dashboardSignInFailure.findMany()).map((f) => f.createdAt)).toEqual([newFailure]);
    expect((await prisma.dashboardSession.findMany()).map((s) => s.id)).toEqual([live.id]);
    expect((await prisma.dashboardLink.findMany()).map((l) => l.id).sort()).toEqual([usedRecently.id, open.id].sort());
    expect(await prisma.dashboardAuditEntry.count({ where: { organisationId } })).toBe(1);
    // Again: nothing left to delete.
    expect(await purgeDashboardRecords(kassa.ctx)).toBe(0);
  });
});
