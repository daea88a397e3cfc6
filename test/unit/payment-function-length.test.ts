import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/config.js';

/**
 * The payment area stays readable: no function in it is 60 lines or longer (issue 33). A small scanner, not a parser:
 * it blanks comments and string literals, finds each function (declaration, method, arrow with a block body) and
 * measures from its first line to its body's closing brace.
 */

const MAX_LINES = 60;
const FILES = [
  ...['src/domain/payments', 'src/db/payments'].flatMap((dir) =>
    readdirSync(path.join(PACKAGE_ROOT, dir))
      .filter((name) => name.endsWith('.ts'))
      .map((name) => `${dir}/${name}`),
  ),
  'src/db/tx-store.ts',
  ...[
    'settle-changed-sessions',
    'bound-transaction-checks',
    'payment-confirmations',
    'reorg-check',
    'block-scanner',
    'range-parts',
    'native-transfers',
  ].map((name) => `src/chain/${name}.ts`),
];

/** The source with comments and the insides of strings and template literals blanked (line breaks kept). */
export function blank(source: string): string {
  let out = '';
  let i = 0;
  const keep = (text: string) => text.replace(/[^\n]/g, ' ');
  while (i < source.length) {
    const two = source.slice(i, i + 2);
    const quote = source[i];
    let end = i + 1;
    if (two === '//') end = source.indexOf('\n', i) < 0 ? source.length : source.indexOf('\n', i);
    else if (two === '/*') end = source.indexOf('*/', i + 2) + 2;
    else if (quote === "'" || quote === '"' || quote === '`') {
      end = i + 1;
      while (end < source.length && source[end] !== quote) end += source[end] === '\\' ? 2 : 1;
      end += 1;
    } else {
      out += source[i];
      i += 1;
      continue;
    }
    out += keep(source.slice(i, end));
    i = end;
  }
  return out;
}

function matching(text: string, open: number): number {
  const pair: Record<string, string> = { '(': ')', '{': '}', '[': ']' };
  const close = pair[text[open]!]!;
  let depth = 0;
  for (let i = open; i < text.length; i += 1) {
    if (text[i] === text[open]) depth += 1;
    else if (text[i] === close && --depth === 0) return i;
  }
  return text.length - 1;
}

/** The body's opening brace after a parameter list closing at `from` (skipping object types in a return type). */
function bodyAfter(text: string, from: number): number | null {
  for (let i = from + 1; i < text.length; i += 1) {
    const ch = text[i];
    if (ch === ';' || (ch === '=' && text[i + 1] !== '>')) return null;
    if (ch !== '{') continue;
    const before = text.slice(0, i).trimEnd().slice(-1);
    if ([':', '<', ',', '|', '&', '('].includes(before)) i = matching(text, i);
    else return i;
  }
  return null;
}

const KEYWORDS = new Set(['if', 'for', 'while', 'switch', 'catch', 'return', 'await', 'function', 'typeof', 'new']);
const START =
  /\bfunction\b[\s\w$*]*(?:<[^>(]*>)?\s*\(|^[ \t]*(?:(?:public|private|protected|static|async|get|set|readonly)\s+)*([A-Za-z_$][\w$]*)\s*(?:<[^>(]*>)?\s*\(|\(\s*(?=[^()]*\)\s*(?::[^=]+)?=>)/gm;

/** Each function of a file: its name (or the line it starts on) and its length in lines. */
export function functionLengths(source: string): Array<{ name: string; line: number; lines: number }> {
  const text = blank(source);
  const lineOf = (index: number) => text.slice(0, index).split('\n').length;
  const found: Array<{ name: string; line: number; lines: number }> = [];
  for (const match of text.matchAll(START)) {
    if (match[1] && KEYWORDS.has(match[1])) continue;
    const open = match.index + match[0].length - 1;
    const close = matching(text, open);
    const body = bodyAfter(text, close);
    if (body === null) continue;
    const between = text.slice(close + 1, body);
    if (match[0].trimStart().startsWith('(') && !between.includes('=>')) continue;
    const end = matching(text, body);
    const name = /\bfunction\s+([\w$]+)/.exec(match[0])?.[1] ?? match[1] ?? 'arrow';
    found.push({ name, line: lineOf(match.index), lines: lineOf(end) - lineOf(match.index) + 1 });
  }
  return found;
}

describe('function length in the payment area', () => {
  it('the scanner measures declarations, methods and arrows, and skips comments and strings', () => {
    const source = [
      'export async function a(x: number): Promise<{ y: number }> {', // 1
      "  const s = '{ not a brace';", //                              2
      '  // } nor this', //                                            3
      '  const f = (z: number) => {', //                               4
      '    return z;', //                                              5
      '  };', //                                                       6
      '  return { y: f(x) };', //                                      7
      '}', //                                                          8
      'class C {', //                                                  9
      '  method(p: string): void {', //                               10
      '    if (p) return;', //                                        11
      '  }', //                                                       12
      '}',
    ].join('\n');
    const lengths = functionLengths(source).map(({ name, lines }) => [name, lines]);
    expect(lengths).toEqual([
      ['a', 8],
      ['arrow', 3],
      ['method', 3],
    ]);
  });

  it(`has no function of ${MAX_LINES} lines or more`, () => {
    const long = FILES.flatMap((file) =>
      functionLengths(readFileSync(path.join(PACKAGE_ROOT, file), 'utf8'))
        .filter(({ lines }) => lines >= MAX_LINES)
        .map(({ name, line, lines }) => `${file}:${line} ${name} (${lines} lines)`),
    );
    expect(long).toEqual([]);
  });
});
