import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/config.js';
import { decide, reasonOf, type PaymentEvent, type Snapshots } from '../../src/domain/payments/decide.js';
import { RULE_CASES, RULES_COVERED, renderRuleTable } from '../../src/domain/payment-rules/rule-table.js';
import { OUTCOME_REASONS } from '../../src/domain/shared/reason-codes.js';

/** docs/payment-rules.md's rule table: event × session state → outcome, each row run through decide(). */

const START = '<!-- rule-table:start (npm run docs:rules) -->';
const END = '<!-- rule-table:end -->';

describe('decide(): the payment rule table', () => {
  it.each(RULE_CASES.map((c) => [`rule ${c.rule}, ${c.event.kind}: ${c.state}`, c] as const))('%s', (_, c) => {
    const outcome = decide(c.event as PaymentEvent, c.snapshot as Snapshots[PaymentEvent['kind']]);
    expect({ outcome: outcome.kind, reason: reasonOf(outcome) }).toEqual({ outcome: c.outcome, reason: c.reason });
  });

  it('covers every rule that decides a payment, every event and every outcome reason', () => {
    expect([...new Set(RULE_CASES.map((c) => c.rule))].sort()).toEqual([...RULES_COVERED]);
    const events = new Set(RULE_CASES.map((c) => c.event.kind));
    for (const kind of [
      'transfer_scanned',
      'exact_credit',
      'bind',
      'bound_judged',
      'confirmation',
      'payments_counted',
    ].concat(['reorganisation', 'clock']))
      expect(events).toContain(kind);
    const reasons = new Set(RULE_CASES.map((c) => c.reason));
    for (const reason of Object.keys(OUTCOME_REASONS)) expect(reasons, reason).toContain(reason);
  });

  it('docs/payment-rules.md shows the table the code decides by', () => {
    const doc = readFileSync(path.join(PACKAGE_ROOT, 'docs/payment-rules.md'), 'utf8');
    const shown = doc.slice(doc.indexOf(START) + START.length + 1, doc.indexOf(END));
    expect(doc.indexOf(START), 'docs/payment-rules.md lacks the rule table markers').toBeGreaterThan(0);
    if (shown !== renderRuleTable())
      expect(shown, 'docs/payment-rules.md is out of date: run `npm run docs:rules` and commit it').toBe(
        renderRuleTable(),
      );
  });
});
