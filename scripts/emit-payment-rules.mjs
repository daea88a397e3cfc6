// Writes the payment rule table (src/domain/payment-rules/rule-table.ts, built into dist/) into
// docs/payment-rules.md between its markers. `npm run docs:rules`; test/unit/payment-decision.test.ts checks drift.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderRuleTable } from '../dist/domain/payment-rules/rule-table.js';

const START = '<!-- rule-table:start (npm run docs:rules) -->';
const END = '<!-- rule-table:end -->';
const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'payment-rules.md');
const doc = readFileSync(file, 'utf8');
const from = doc.indexOf(START);
const to = doc.indexOf(END);
if (from < 0 || to < from) throw new Error(`docs/payment-rules.md has no ${START} … ${END} markers`);
writeFileSync(file, `${doc.slice(0, from + START.length)}\n${renderRuleTable()}${doc.slice(to)}`);
console.log('docs/payment-rules.md: rule table written');
