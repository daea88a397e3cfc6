import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/shared/errors.js';
import { hashPassword, UNUSABLE_HASH, verifyPassword } from '../../src/domain/dashboard/passwords.js';
import {
  DASHBOARD_ROLES,
  PERMISSIONS,
  requirePermission,
  roleAllows,
  type DashboardPermission,
} from '../../src/domain/dashboard/roles.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** docs/dashboard.md#roles as { permission: roles with a tick }. */
function documentedTable(): Record<string, string[]> {
  const doc = readFileSync(path.join(ROOT, 'docs/dashboard.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Roles'), doc.indexOf('## Signing in'));
  const lines = section.split('\n').filter((line) => line.startsWith('|'));
  const header = lines[0]!
    .split('|')
    .slice(2, -1)
    .map((cell) => cell.trim());
  const table: Record<string, string[]> = {};
  for (const line of lines.slice(2)) {
    const cells = line.split('|').slice(1, -1);
    const permission = /`(\w+)`/.exec(cells[0]!)![1]!;
    table[permission] = header.filter((_, i) => cells[i + 1]!.trim() === '✓');
  }
  return table;
}

describe('dashboard roles', () => {
  it('docs/dashboard.md#roles is the table the server enforces', () => {
    const documented = documentedTable();
    expect(Object.keys(documented).sort()).toEqual(Object.keys(PERMISSIONS).sort());
    for (const permission of Object.keys(PERMISSIONS) as DashboardPermission[])
      expect(documented[permission], permission).toEqual(DASHBOARD_ROLES.filter((r) => roleAllows(r, permission)));
  });

  it('each role has what the roles below it have', () => {
    for (const permission of Object.keys(PERMISSIONS) as DashboardPermission[]) {
      const allowed = DASHBOARD_ROLES.map((role) => roleAllows(role, permission));
      expect(allowed.indexOf(true), permission).toBeGreaterThanOrEqual(0);
      expect(allowed.slice(allowed.indexOf(true)).every(Boolean), permission).toBe(true);
    }
  });

  it('refuses a role without the permission as forbidden, naming the least role that has it', () => {
    expect(() => requirePermission('support', 'manage_keys')).toThrow(DomainError);
    try {
      requirePermission('viewer', 'read_audit_log');
    } catch (error) {
      expect((error as DomainError).code).toBe('forbidden');
      expect((error as DomainError).message).toContain('ask an organisation owner');
    }
    expect(() => requirePermission('owner', 'read_audit_log')).not.toThrow();
  });
});

describe('dashboard passwords', () => {
  it('are scrypt with a salt of their own: the same password hashes differently and verifies', async () => {
    const [first, second] = await Promise.all([
      hashPassword('a long enough secret'),
      hashPassword('a long enough secret'),
    ]);
    expect(first).toMatch(/^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(first.split('$')[4]).not.toBe(second.split('$')[4]);
    expect(first).not.toBe(second);
    expect(await verifyPassword('a long enough secret', first)).toBe(true);
    expect(await verifyPassword('a long enough secret', second)).toBe(true);
    expect(await verifyPassword('a long enough secreT', first)).toBe(false);
    expect(await verifyPassword('', first)).toBe(false);
  });

  it('no password matches the hash unknown accounts are checked against; a malformed hash matches nothing', async () => {
    expect(await verifyPassword('', UNUSABLE_HASH)).toBe(false);
    expect(await verifyPassword('anything', 'md5$abc')).toBe(false);
  });
});
