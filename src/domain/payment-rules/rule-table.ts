import type { PaymentEvent } from '../payments/decide.js';
import type { RuleCase } from './rule-fixtures.js';
import { scanRows } from './scan-rows.js';
import { bindRows } from './bind-rows.js';
import { depositRows } from './deposit-rows.js';
import { laterRows } from './later-rows.js';

// docs/payment-rules.md's rule table: each row an event, the state it meets and what decide() makes of it.
// test/unit/payment-decision.test.ts runs every row through decide(); `npm run docs:rules` writes the doc's table.

export type { RuleCase } from './rule-fixtures.js';

/** Every row of the rule table, in the doc's order. */
export const RULE_CASES: readonly RuleCase[] = [...depositRows, ...scanRows, ...bindRows, ...laterRows].sort(
  (a, b) => a.rule - b.rule,
);

/**
 * The rules of docs/payment-rules.md the table covers (0: deposit mode, shown as D); rule 8 (rates) prices quotes and
 * decides no payment.
 */
export const RULES_COVERED = [0, 1, 2, 3, 4, 5, 6, 7] as const;

const eventName = (event: PaymentEvent) =>
  event.kind === 'bind'
    ? `bind (${event.evidence})`
    : event.kind === 'clock'
      ? `clock (${event.tick})`
      : event.kind.replace(/_/g, ' ');

/** The table as markdown: what docs/payment-rules.md shows between its markers. */
export function renderRuleTable(): string {
  const lines = [
    '| Rule | Event | Session and amount | Outcome | Reason |',
    '|---|---|---|---|---|',
    ...RULE_CASES.map(
      (c) =>
        `| ${c.rule === 0 ? 'D' : c.rule} | ${eventName(c.event)} | ${c.state} | \`${c.outcome}\` | \`${c.reason}\` |`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}
