import { describe, expect, it } from 'vitest';
import { checkPayerIdentity, type PayerIdentityInput } from '../../src/domain/sessions/payer-identity.js';
import { parseCreateCheckout } from '../../src/rest/create-checkout.schema.js';

// docs/hosted-pages.md#payment-links: what a payer types on a link's page ends up in webhooks, events and
// merchants' dashboards, so it is held to the merchant create schema's rules and more.

const ALL = ['email', 'telegram', 'username'] as const;
const check = (input: PayerIdentityInput) => checkPayerIdentity(input, ALL, true);
/** Whether POST /checkout-sessions takes this user.email (its other fields are left out on purpose). */
function createAccepts(email: string): boolean {
  const parsed = parseCreateCheckout({ user: { id: 'u', email }, items: [], currency: 'USD' });
  return parsed.ok || !parsed.problems.some((problem) => problem.startsWith('user.email'));
}

const EMAILS = [
  'payer@example.com',
  'first.last+tag@sub.example.co.uk',
  "o'brien@example.ie",
  '"><svg/onload=alert(1)>@x.yz',
  '<b>@a.bc',
  'a@b.c',
  'a@@b.cd',
  'a b@c.de',
  'a@b..cd',
  '.a@b.cd',
  'a.@b.cd',
  'jörg@example.de',
  'a@exämple.de',
  'a@b.cd>',
  'a@-b.cd',
  'x@y.z1',
];

describe('checkPayerIdentity: email', () => {
  it.each(EMAILS)('agrees with the merchant create schema on %j', (email) => {
    const { identity, problems } = check({ email });
    expect(problems.length === 0, JSON.stringify(problems)).toBe(createAccepts(email));
    if (problems.length === 0) expect(identity.email).toBe(email);
    else expect(problems).toEqual(['email must be an email address']);
  });

  it('refuses markup that the old pattern let through', () => {
    expect(check({ email: '"><svg/onload=alert(1)>@x.yz' }).problems).toEqual(['email must be an email address']);
    expect(check({ email: '<b>@a.bc' }).problems).toEqual(['email must be an email address']);
  });

  it('trims what the page sends around it, and refuses invisible characters inside it by name', () => {
    expect(check({ email: '  payer@example.com ' }).identity.email).toBe('payer@example.com');
    expect(check({ email: 'pay\u202eer@example.com' }).problems).toEqual([
      'email must not contain control or invisible formatting characters (found U+202E)',
    ]);
    expect(check({ email: '\ufeffpayer@example.com' }).problems).toEqual([
      'email must not contain control or invisible formatting characters (found U+FEFF)',
    ]);
  });
});

describe('checkPayerIdentity: username', () => {
  it.each([
    ['Erika', 'Erika'],
    ["O'Brien & Söhne", "O'Brien & Söhne"],
    ['  José  ', 'José'],
    ['李小龍', '李小龍'],
  ])('accepts %j', (username, stored) => {
    const { identity, problems } = check({ username });
    expect(problems).toEqual([]);
    expect(identity.username).toBe(stored);
  });

  it('stores the composed (NFC) form, so one name is one identity however it was typed', () => {
    expect(check({ username: 'Jose\u0301' }).identity.username).toBe('Jos\u00e9');
  });

  it.each([
    ['bob\u009b', 'U+009B'],
    ['\u202eevil', 'U+202E'],
    ['a\u200bb', 'U+200B'],
    ['left\u2066right', 'U+2066'],
    ['nul\u0000', 'U+0000'],
    ['tab\there', 'U+0009'],
    ['line\u2028break', 'U+2028'],
    ['soft\u00adhyphen', 'U+00AD'],
  ])('refuses control, bidi and format characters: %j', (username, codePoint) => {
    expect(check({ username }).problems).toEqual([
      `username must not contain control or invisible formatting characters (found ${codePoint})`,
    ]);
  });

  it('refuses markup', () => {
    expect(check({ username: '<b>bob</b>' }).problems).toEqual(['username must not contain < or >']);
    expect(check({ username: '"><img src=x onerror=alert(1)>' }).problems).toEqual([
      'username must not contain < or >',
    ]);
  });

  it('keeps the length rule: 1 to 64 characters', () => {
    expect(check({ username: 'x'.repeat(64) }).problems).toEqual([]);
    expect(check({ username: 'x'.repeat(65) }).problems).toEqual(['username must be 1 to 64 characters']);
  });
});

describe('checkPayerIdentity: telegram', () => {
  it('takes @name (lower-cased) or a numeric id', () => {
    expect(check({ telegram: '@Payer_One' }).identity.telegramId).toBe('@payer_one');
    expect(check({ telegram: '123456789' }).identity.telegramId).toBe('123456789');
  });

  it.each([
    ['\ufeff@alice_1', 'U+FEFF'],
    ['@alice_1\u202e', 'U+202E'],
    ['12345\u009b', 'U+009B'],
    ['\u200b123456', 'U+200B'],
  ])('refuses control, bidi and format characters: %j', (telegram, codePoint) => {
    expect(check({ telegram }).problems).toEqual([
      `telegram must not contain control or invisible formatting characters (found ${codePoint})`,
    ]);
  });

  it('refuses markup and other scripts by its pattern', () => {
    const problem = 'telegram must be a Telegram username (@name, 5 to 32 letters, digits or _) or a numeric user id';
    expect(check({ telegram: '<b>alice</b>' }).problems).toEqual([problem]);
    expect(check({ telegram: '١٢٣٤٥' }).problems).toEqual([problem]);
  });
});
