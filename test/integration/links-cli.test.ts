import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { hasStackTrace, parseJsonOutput, runKassaInProcess as kassa } from '../support/cli-process.js';

/**
 * Issue 12: `kassa links create|list|show|deactivate` and `kassa orgs update` (logo, brand
 * colour), on a PostgreSQL database of this file's own, with their exit codes and messages.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
let database: TestDatabase;
let env: Record<string, string>;
let org: string;

beforeAll(async () => {
  database = await createTestDatabase('postgres');
  env = {
    KASSA_ENV: 'test',
    LOG_LEVEL: 'silent',
    KASSA_NETWORKS: 'local',
    DATABASE_URL: database.databaseUrl!,
    KASSA_DATA_DIR: database.dataDir,
    CHECKOUT_BASE_URL: 'https://pay.example.test',
  };
  org = parseJsonOutput<{ id: string }>(
    await kassa(
      [
        'orgs',
        'create',
        '--name',
        'CLI Shop',
        '--wallet',
        `0x${randomBytes(20).toString('hex')}`,
        '--receiving',
        'shared',
        '--json',
      ],
      env,
    ),
  ).id;
});

afterAll(async () => {
  await database?.drop();
});

describe('kassa links', () => {
  it('creates a fixed basket and an open amount, lists, shows and deactivates them', async () => {
    const created = await kassa(
      [
        'links',
        'create',
        '--org',
        org,
        '--name',
        'Mug',
        '--currency',
        'eur',
        '--item',
        'Mug: blue:2:9.95',
        '--item',
        'Gift wrap:1:2',
        '--identity',
        'email,telegram',
        '--max-uses',
        '3',
        '--json',
      ],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    const link = parseJsonOutput<Record<string, any>>(created);
    expect(link.payment_link_id).toMatch(UUID);
    expect(link).toMatchObject({
      url: `https://pay.example.test/l/${link.payment_link_id}`,
      name: 'Mug',
      currency: 'EUR',
      items: [
        { name: 'Mug: blue', quantity: 2, unit_price: '9.95000000' },
        { name: 'Gift wrap', quantity: 1, unit_price: '2.00000000' },
      ],
      total_amount_fiat: '21.90000000',
      identity_options: ['email', 'telegram'],
      requires_payer_identity: true,
      max_uses: 3,
      state: 'active',
    });
    const open = parseJsonOutput<Record<string, any>>(
      await kassa(
        [
          'links',
          'create',
          '--org',
          org,
          '--name',
          'Tip',
          '--currency',
          'USD',
          '--amount-min',
          '1',
          '--amount-max',
          '20',
          '--json',
        ],
        env,
      ),
    );
    expect(open).toMatchObject({ amount_fiat: { min: '1.00000000', max: '20.00000000' }, anonymous: true });

    const listed = parseJsonOutput<Array<{ payment_link_id: string }>>(
      await kassa(['links', 'list', '--org', org, '--json'], env),
    );
    expect(listed.map((l) => l.payment_link_id)).toEqual([open.payment_link_id, link.payment_link_id]);
    const text = await kassa(['links', 'list', '--org', org], env);
    expect(text.stdout).toContain(
      `${link.payment_link_id}  active    Mug  2 item(s) EUR  0/3 uses  https://pay.example.test/l/${link.payment_link_id}`,
    );

    expect(parseJsonOutput(await kassa(['links', 'show', link.payment_link_id, '--org', org, '--json'], env))).toEqual({
      ...link,
      updated_at: expect.any(String),
    });
    const deactivated = parseJsonOutput<Record<string, any>>(
      await kassa(['links', 'deactivate', link.payment_link_id, '--org', org, '--json'], env),
    );
    expect(deactivated).toMatchObject({ active: false, state: 'inactive' });
  });

  it('refuses bad input with exit 2 and unknown ids with exit 4, one readable line each', async () => {
    const cases: Array<[string[], number, RegExp]> = [
      [
        ['links', 'create', '--org', org, '--name', 'X', '--currency', 'USD'],
        2,
        /must have exactly one of items and amount_fiat/,
      ],
      [
        ['links', 'create', '--org', org, '--name', 'X', '--currency', 'USD', '--item', 'bad'],
        2,
        /--item 1 must be NAME:QUANTITY:UNIT_PRICE/,
      ],
      [
        [
          'links',
          'create',
          '--org',
          org,
          '--name',
          'X',
          '--currency',
          'USD',
          '--item',
          'A:0:-1',
          '--identity',
          'phone',
        ],
        2,
        /items\.0\.quantity must not be less than 1; items\.0\.unit_price must not be less than 0; identity_options\.0 must be one of email, telegram, username/,
      ],
      [
        ['links', 'create', '--org', org, '--name', 'X', '--currency', 'XYZ', '--item', 'A:1:1'],
        2,
        /currency XYZ is not supported/,
      ],
      [
        [
          'links',
          'create',
          '--org',
          '00000000-0000-4000-8000-000000000000',
          '--name',
          'X',
          '--currency',
          'USD',
          '--item',
          'A:1:1',
        ],
        4,
        /Organisation .* not found/,
      ],
      [['links', 'show', 'nope', '--org', org], 4, /Payment link nope not found/],
      [['links', 'deactivate', '00000000-0000-4000-8000-000000000000', '--org', org], 4, /not found/],
      [['links', 'list', '--org', 'nope'], 4, /Organisation nope not found/],
      [['links', 'create', '--name', 'X'], 2, /required option/],
    ];
    for (const [args, code, message] of cases) {
      const run = await kassa(args, env);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(code);
      expect(run.stderr, args.join(' ')).toMatch(message);
      expect(hasStackTrace(run.stderr)).toBe(false);
    }
  });
});

describe('kassa orgs update', () => {
  it('sets and clears the logo and brand colour; refuses SVG, big files and bad colours', async () => {
    const png = path.join(database.dataDir, 'logo.png');
    writeFileSync(
      png,
      Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(100)]),
    );
    const set = await kassa(['orgs', 'update', '--org', org, '--logo', png, '--brand-color', '#0F766E', '--json'], env);
    expect(set.code, set.stderr).toBe(0);
    const view = parseJsonOutput<Record<string, string>>(set);
    expect(view).toMatchObject({ id: org, name: 'CLI Shop', brand_color: '#0f766e' });
    expect(view.logo_url).toMatch(/^\/brand\/logo\/[0-9a-f]{64}$/);

    const svg = path.join(database.dataDir, 'logo.svg');
    writeFileSync(svg, '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    const big = path.join(database.dataDir, 'big.png');
    writeFileSync(
      big,
      Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(100 * 1024)]),
    );
    const refusals: Array<[string[], number, RegExp]> = [
      [['--logo', svg], 2, /logo must be a PNG or WebP image \(SVG and other formats are refused\)/],
      [['--logo', big], 2, /logo must be at most 100 KB/],
      [['--brand-color', 'teal'], 2, /brand colour must be a hex colour #rrggbb/],
      [['--logo', path.join(database.dataDir, 'missing.png')], 2, /cannot be read: ENOENT/],
      [[], 2, /give --logo and\/or --brand-color/],
    ];
    for (const [args, code, message] of refusals) {
      const run = await kassa(['orgs', 'update', '--org', org, ...args], env);
      expect(run.code, run.stderr).toBe(code);
      expect(run.stderr).toMatch(message);
    }
    expect(
      (
        await kassa(
          ['orgs', 'update', '--org', '00000000-0000-4000-8000-000000000000', '--brand-color', '#000000'],
          env,
        )
      ).code,
    ).toBe(4);
    const cleared = parseJsonOutput<Record<string, unknown>>(
      await kassa(['orgs', 'update', '--org', org, '--logo', 'none', '--brand-color', 'none', '--json'], env),
    );
    expect(cleared).toMatchObject({ brand_color: null, logo_url: null });
  });
});
