import { describe, expect, it } from 'vitest';
import { parseJsonExact } from '../../src/json/decimal-json.js';
import { Decimal } from '../../src/domain/shared/money.js';
import { LIMITS, parseCreateCheckout } from '../../src/rest/create-checkout.schema.js';

// docs/api/rest.md#create-rules-and-limits and #errors: every problem, named by field path.

const USER = { id: 'customer-1', email: 'payer@example.com' };
const ITEM = { name: 'Coffee beans', quantity: 2, unit_price: 12.5 };
const request = (overrides: Record<string, unknown> = {}) => ({
  user: USER,
  items: [ITEM],
  currency: 'USD',
  ...overrides,
});

/** Parses JSON text as production does (JSON numbers become Decimal), then validates it. */
const parseText = (text: string) => parseCreateCheckout(parseJsonExact(text));
const parse = (body: unknown) => parseText(JSON.stringify(body));
const problems = (body: unknown) => {
  const result = parse(body);
  if (result.ok) throw new Error(`expected problems, got ${JSON.stringify(result.input)}`);
  return result.problems;
};
const problemsOfText = (text: string) => {
  const result = parseText(text);
  if (result.ok) throw new Error(`expected problems, got ${JSON.stringify(result.input)}`);
  return result.problems;
};
const withItem = (item: Record<string, unknown>) => request({ items: [item] });

describe('parseCreateCheckout: valid bodies', () => {
  it('returns the domain input with exact decimal strings', () => {
    const text =
      '{"user":{"id":"customer-1","email":"payer@example.com","username":"ann"},' +
      '"items":[{"name":"Coffee beans","quantity":2,"unit_price":12.50},' +
      '{"name":"Grinder","quantity":1,"unit_price":97250.12345678,"product_id":"sku-7"}],' +
      '"currency":"usd","metadata":{"order":"A-17"},"expires_in_minutes":90}';
    expect(parseText(text)).toEqual({
      ok: true,
      input: {
        user: { id: 'customer-1', email: 'payer@example.com', username: 'ann' },
        items: [
          { name: 'Coffee beans', quantity: 2, unitPrice: '12.5', productId: undefined },
          { name: 'Grinder', quantity: 1, unitPrice: '97250.12345678', productId: 'sku-7' },
        ],
        currency: 'usd',
        metadata: { order: 'A-17' },
        expiresInMinutes: 90,
      },
    });
  });

  it('leaves optional fields undefined', () => {
    const result = parse(request());
    expect(result).toEqual({
      ok: true,
      input: {
        user: USER,
        items: [{ name: 'Coffee beans', quantity: 2, unitPrice: '12.5', productId: undefined }],
        currency: 'USD',
        metadata: undefined,
        expiresInMinutes: undefined,
      },
    });
  });

  it.each([
    ['999999999999.99999999', '999999999999.99999999'],
    ['1000000000000', '1000000000000'],
    ['1000000000000.00000000', '1000000000000'],
    ['0.00000001', '0.00000001'],
    ['0', '0'],
    ['-0', '0'],
    ['1.5e2', '150'],
    ['1E-8', '0.00000001'],
    ['12.50000000', '12.5'],
  ])('keeps unit_price %s exact as %s (never through a float)', (literal, expected) => {
    const result = parseText(
      `{"user":{"id":"c","email":"a@b.co"},"items":[{"name":"x","quantity":1,"unit_price":${literal}}],"currency":"USD"}`,
    );
    expect(result.ok && result.input.items[0]!.unitPrice).toBe(expected);
  });

  it.each([
    ['1', 1],
    ['1.0', 1],
    ['1e6', 1_000_000],
    ['1000000', 1_000_000],
  ])('accepts quantity %s as %i', (literal, expected) => {
    const result = parseText(
      `{"user":{"id":"c","email":"a@b.co"},"items":[{"name":"x","quantity":${literal},"unit_price":1}],"currency":"USD"}`,
    );
    expect(result.ok && result.input.items[0]!.quantity).toBe(expected);
  });

  it.each([5, 60, 10_080])('accepts expires_in_minutes %i', (minutes) => {
    const result = parse(request({ expires_in_minutes: minutes }));
    expect(result.ok && result.input.expiresInMinutes).toBe(minutes);
  });

  it('trims strings', () => {
    const result = parse(
      request({
        user: { id: '  c-1 ', email: 'a@b.co', username: ' ann ' },
        items: [{ ...ITEM, name: ' Beans ', product_id: ' p1 ' }],
      }),
    );
    expect(result.ok && result.input.user).toEqual({ id: 'c-1', email: 'a@b.co', username: 'ann' });
    expect(result.ok && result.input.items[0]).toEqual({
      name: 'Beans',
      quantity: 2,
      unitPrice: '12.5',
      productId: 'p1',
    });
  });

  it('accepts 100 items, strings at their maximum length, 50 metadata keys and 8 KB of metadata', () => {
    const items = Array.from({ length: 100 }, (_, i) => ({
      name: 'n'.repeat(500),
      quantity: 1_000_000,
      unit_price: 1,
      product_id: `${i}`.padEnd(255, 'p'),
    }));
    const user = { id: 'i'.repeat(255), email: `${'a'.repeat(249)}@b.com`, username: 'u'.repeat(255) };
    expect(user.email).toHaveLength(255);
    expect(parse(request({ items, user })).ok).toBe(true);
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
    expect(parse(request({ metadata: fifty })).ok).toBe(true);
    const eightKb = { big: 'x'.repeat(8192 - '{"big":""}'.length) };
    expect(Buffer.byteLength(JSON.stringify(eightKb))).toBe(LIMITS.metadataBytes);
    expect(parse(request({ metadata: eightKb })).ok).toBe(true);
  });

  it('turns metadata numbers into plain JSON numbers (metadata is not money)', () => {
    const result = parseText(
      '{"user":{"id":"c","email":"a@b.co"},"items":[{"name":"x","quantity":1,"unit_price":1}],"currency":"USD",' +
        '"metadata":{"a":1.5,"b":{"c":[1,2,{"d":3}]},"e":null,"f":"s","g":true}}',
    );
    expect(result.ok && result.input.metadata).toEqual({
      a: 1.5,
      b: { c: [1, 2, { d: 3 }] },
      e: null,
      f: 's',
      g: true,
    });
    const metadata = result.ok ? (result.input.metadata as { a: unknown; b: { c: unknown[] } }) : null;
    expect(metadata?.a).not.toBeInstanceOf(Decimal);
    expect(typeof metadata?.b.c[0]).toBe('number');
  });
});

describe('parseCreateCheckout: problems', () => {
  it.each([
    ['an array', '[]'],
    ['null', 'null'],
    ['a string', '"x"'],
    ['a number', '42'],
    ['true', 'true'],
  ])('rejects a body that is %s', (_name, text) => {
    expect(problemsOfText(text)).toEqual(['body must be a JSON object']);
  });

  it('names every missing required field', () => {
    expect(problems({})).toEqual(['user is required', 'items is required', 'currency is required']);
    expect(problems(request({ user: {} }))).toEqual(['user.id is required', 'user.email is required']);
    expect(problems(withItem({}))).toEqual([
      'items.0.name is required',
      'items.0.quantity is required',
      'items.0.unit_price is required',
    ]);
  });

  it('names every field of the wrong type', () => {
    expect(problemsOfText('{"user":1,"items":{},"currency":1,"metadata":[],"expires_in_minutes":"60"}')).toEqual([
      'user must be an object',
      'items must be an array',
      'currency must be a string',
      'metadata must be an object',
      'expires_in_minutes must be a number',
    ]);
  });

  it.each([
    [{ id: 1, email: 'a@b.co' }, ['user.id must be a string']],
    [{ id: '', email: 'a@b.co' }, ['user.id should not be empty']],
    [{ id: '   ', email: 'a@b.co' }, ['user.id should not be empty']],
    [{ id: 'i'.repeat(256), email: 'a@b.co' }, ['user.id must be shorter than or equal to 255 characters']],
    [{ id: 'c', email: 'not-an-email' }, ['user.email must be an email']],
    [{ id: 'c', email: 5 }, ['user.email must be an email']],
    [{ id: 'c', email: null }, ['user.email must be an email']],
    [{ id: 'c', email: `${'a'.repeat(250)}@b.com` }, ['user.email must be shorter than or equal to 255 characters']],
    [{ id: 'c', email: 'a@b.co', username: '' }, ['user.username should not be empty']],
    [{ id: 'c', email: 'a@b.co', username: null }, ['user.username must be a string']],
    [
      { id: 'c', email: 'a@b.co', username: 'u'.repeat(256) },
      ['user.username must be shorter than or equal to 255 characters'],
    ],
    [[], ['user must be an object']],
    [null, ['user must be an object']],
  ])('user %j → %j', (user, expected) => {
    expect(problems(request({ user }))).toEqual(expected);
  });

  it.each([
    [[], ['items must contain at least 1 element']],
    [Array.from({ length: 101 }, () => ITEM), ['items must contain no more than 100 elements']],
    [
      [1, null, 'a', []],
      [
        'items.0 must be an object',
        'items.1 must be an object',
        'items.2 must be an object',
        'items.3 must be an object',
      ],
    ],
    ['items', ['items must be an array']],
  ])('items %# → %j', (items, expected) => {
    expect(problems(request({ items }))).toEqual(expected);
  });

  it.each([
    [{ name: '' }, ['items.0.name should not be empty']],
    [{ name: ' ' }, ['items.0.name should not be empty']],
    [{ name: 7 }, ['items.0.name must be a string']],
    [{ name: 'n'.repeat(501) }, ['items.0.name must be shorter than or equal to 500 characters']],
    [{ quantity: 0 }, ['items.0.quantity must not be less than 1']],
    [{ quantity: -3 }, ['items.0.quantity must not be less than 1']],
    [{ quantity: 1.5 }, ['items.0.quantity must be an integer number']],
    [{ quantity: -1.5 }, ['items.0.quantity must be an integer number']],
    [{ quantity: 1_000_001 }, ['items.0.quantity must not be greater than 1000000']],
    [{ quantity: null }, ['items.0.quantity must be a number']],
    [{ quantity: true }, ['items.0.quantity must be a number']],
    [{ unit_price: -0.01 }, ['items.0.unit_price must not be less than 0']],
    [{ unit_price: null }, ['items.0.unit_price must be a number']],
    [{ unit_price: false }, ['items.0.unit_price must be a number']],
    [{ unit_price: { amount: 1 } }, ['items.0.unit_price must be a number']],
    [{ product_id: '' }, ['items.0.product_id should not be empty']],
    [{ product_id: 12 }, ['items.0.product_id must be a string']],
    [{ product_id: 'p'.repeat(256) }, ['items.0.product_id must be shorter than or equal to 255 characters']],
  ])('item %j → %j', (change, expected) => {
    expect(problems(withItem({ ...ITEM, ...change }))).toEqual(expected);
  });

  it.each([
    ['1000000000000.00000001', 'items.0.unit_price must not be greater than 1000000000000'],
    ['1e13', 'items.0.unit_price must not be greater than 1000000000000'],
    ['0.000000001', 'items.0.unit_price must have at most 8 decimal places'],
    ['1e-9', 'items.0.unit_price must have at most 8 decimal places'],
    ['97250.123456789012', 'items.0.unit_price must have at most 8 decimal places'],
    ['-1.123456789', 'items.0.unit_price must not be less than 0'],
  ])('unit_price %s → %s', (literal, expected) => {
    expect(
      problemsOfText(
        `{"user":{"id":"c","email":"a@b.co"},"items":[{"name":"x","quantity":1,"unit_price":${literal}}],"currency":"USD"}`,
      ),
    ).toEqual([expected]);
  });

  it.each([
    ['', 'currency must be a three-letter ISO 4217 code'],
    ['US', 'currency must be a three-letter ISO 4217 code'],
    ['USDT', 'currency must be a three-letter ISO 4217 code'],
    ['US1', 'currency must be a three-letter ISO 4217 code'],
    [' USD', 'currency must be a three-letter ISO 4217 code'],
    [null, 'currency must be a string'],
    [840, 'currency must be a string'],
  ])('currency %j → %s', (currency, expected) => {
    expect(problems(request({ currency }))).toEqual([expected]);
  });

  it.each([
    [4, 'expires_in_minutes must not be less than 5'],
    [0, 'expires_in_minutes must not be less than 5'],
    [10_081, 'expires_in_minutes must not be greater than 10080'],
    [5.5, 'expires_in_minutes must be an integer number'],
    [null, 'expires_in_minutes must be a number'],
  ])('expires_in_minutes %j → %s', (minutes, expected) => {
    expect(problems(request({ expires_in_minutes: minutes }))).toEqual([expected]);
  });

  it.each([
    [null, 'metadata must be an object'],
    ['x', 'metadata must be an object'],
    [[1], 'metadata must be an object'],
    [
      Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])),
      'metadata must not have more than 50 keys',
    ],
    [{ big: 'x'.repeat(8192 - '{"big":""}'.length + 1) }, 'metadata must not be larger than 8 KB as JSON'],
    [{ big: 'é'.repeat(4096) }, 'metadata must not be larger than 8 KB as JSON'], // 8 KB counts bytes, not characters
  ])('metadata %# → %s', (metadata, expected) => {
    expect(problems(request({ metadata }))).toEqual([expected]);
  });

  it('rejects numbers given as strings', () => {
    expect(
      problems(request({ items: [{ name: 'x', quantity: '2', unit_price: '12.5' }], expires_in_minutes: '60' })),
    ).toEqual([
      'items.0.quantity must be a number',
      'items.0.unit_price must be a number',
      'expires_in_minutes must be a number',
    ]);
  });

  it('rejects unknown properties at the top level and nested, naming each', () => {
    expect(
      problems({
        ...request({ user: { ...USER, x: 1 }, items: [ITEM, { ...ITEM, z: 2, price: 3 }] }),
        extra: 1,
        amount: 2,
      }),
    ).toEqual([
      'property user.x should not exist',
      'property items.1.z should not exist',
      'property items.1.price should not exist',
      'property extra should not exist',
      'property amount should not exist',
    ]);
  });

  it('rejects __proto__ as an unknown property', () => {
    expect(
      problemsOfText(
        '{"__proto__":{"x":1},"user":{"id":"c","email":"a@b.co"},"items":[{"name":"x","quantity":1,"unit_price":1}],"currency":"USD"}',
      ),
    ).toEqual(['property __proto__ should not exist']);
  });

  it('lists every problem at once, with field paths', () => {
    const text =
      '{"user":{"id":" ","email":"nope","username":"","x":1},' +
      '"items":[{"name":"x","quantity":"2","unit_price":"12.5"},{"quantity":0,"unit_price":-1,"name":""},' +
      '{"name":"y","quantity":1.5,"unit_price":1.123456789,"z":2},{"name":"y","quantity":1000001,"unit_price":1000000000000.01}],' +
      '"currency":"US","expires_in_minutes":4,"extra":1}';
    expect(problemsOfText(text)).toEqual([
      'user.id should not be empty',
      'user.email must be an email',
      'user.username should not be empty',
      'property user.x should not exist',
      'items.0.quantity must be a number',
      'items.0.unit_price must be a number',
      'items.1.name should not be empty',
      'items.1.quantity must not be less than 1',
      'items.1.unit_price must not be less than 0',
      'items.2.quantity must be an integer number',
      'items.2.unit_price must have at most 8 decimal places',
      'property items.2.z should not exist',
      'items.3.quantity must not be greater than 1000000',
      'items.3.unit_price must not be greater than 1000000000000',
      'currency must be a three-letter ISO 4217 code',
      'expires_in_minutes must not be less than 5',
      'property extra should not exist',
    ]);
  });

  it('reports one problem per field (the first rule it breaks)', () => {
    // -1.5 is both negative and fractional; 1e13 with 9 decimals is both too large and too precise.
    expect(
      problemsOfText(
        '{"user":{"id":"c","email":"a@b.co"},"items":[{"name":"x","quantity":-1.5,"unit_price":10000000000000.123456789}],"currency":"USD"}',
      ),
    ).toEqual([
      'items.0.quantity must be an integer number',
      'items.0.unit_price must not be greater than 1000000000000',
    ]);
  });
});

describe('LIMITS', () => {
  it('holds the limits of docs/api/rest.md#create-rules-and-limits', () => {
    expect(LIMITS).toEqual({
      items: 100,
      quantity: 1_000_000,
      unitPrice: '1000000000000',
      unitPriceDecimals: 8,
      metadataKeys: 50,
      metadataBytes: 8192,
      expiresInMinutes: { min: 5, max: 10_080 },
      text: 255,
      itemName: 500,
    });
  });
});
