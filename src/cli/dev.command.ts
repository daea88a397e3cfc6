import type { Command } from 'commander';
import { devPayBatch } from '../chain/dev-pay.js';
import { toPublicView } from '../domain/sessions/checkout-session.views.js';
import { invalid } from '../domain/shared/errors.js';
import { getCheckoutSession } from '../domain/sessions/get-checkout-session.js';
import { printJson, printLine, printProblem } from './output.js';
import { commandRun } from './terminal.js';
import { withRuntime } from './with-runtime.js';

export function registerDevCommands(program: Command): void {
  const dev = program.command('dev').description('development helpers for the offline sandbox chain');

  dev
    .command('pay')
    .description('pay a session on the sandbox chain from a funded account and bind the transaction, as a payer would')
    .argument('<session-ids...>', 'checkout session id (several with --batch)')
    .option('--amount <amount>', 'amount of the asset to send (default: what is still owed)')
    .option(
      '--asset <ticker>',
      'asset to pay in when the session has none selected yet (default: the first offered on local)',
    )
    .option('--account <n>', 'sandbox account that pays (2–9; 1 is the demo merchant wallet)', '2')
    .option('--no-bind', 'only send the transfer; do not bind it to the session')
    .option(
      '--via-contract',
      'pay through a contract (the sandbox Multicall3), as a contract wallet does: native coin moves by an internal ' +
        'transfer; nothing is bound',
    )
    .option('--batch', 'pay every session given in one transaction through the contract, as an exchange batches')
    .option('--wait [seconds]', 'wait until each session leaves its current status (default 30 s)')
    .option('--json', 'print one JSON object (an array for several sessions)')
    .action(
      async (
        sessionIds: string[],
        options: {
          amount?: string;
          asset?: string;
          account: string;
          bind: boolean;
          viaContract?: boolean;
          batch?: boolean;
          wait?: boolean | string;
          json?: boolean;
        },
      ) => {
        if (!/^[2-9]$/.test(options.account)) throw invalid('--account must be a sandbox payer account from 2 to 9');
        const waitSeconds = options.wait === undefined ? 0 : options.wait === true ? 30 : Number(options.wait);
        if (!Number.isFinite(waitSeconds) || waitSeconds < 0 || waitSeconds > 600)
          throw invalid('--wait must be a number of seconds from 0 to 600');
        if (sessionIds.length > 1 && !options.batch)
          throw invalid('several sessions are paid in one transaction: give --batch');
        const results = await withRuntime(async (ctx) => {
          const before = await Promise.all(sessionIds.map((id) => getCheckoutSession(ctx, id)));
          const payments = await devPayBatch(ctx, sessionIds, {
            amount: options.amount,
            asset: options.asset,
            account: Number(options.account),
            bind: options.bind,
            viaContract: options.viaContract === true || options.batch === true,
          });
          let sessions = await Promise.all(sessionIds.map((id) => getCheckoutSession(ctx, id)));
          const unchanged = () => sessions.map((session, index) => session.status === before[index]!.status);
          const deadline = Date.now() + waitSeconds * 1000;
          // The running server's watcher credits the payments; a status change shows it did.
          while (waitSeconds > 0 && unchanged().some(Boolean) && Date.now() < deadline) {
            await new Promise((resolve) => setTimeout(resolve, 250));
            sessions = await Promise.all(sessionIds.map((id) => getCheckoutSession(ctx, id)));
          }
          const timedOut = unchanged().map((same) => waitSeconds > 0 && same);
          return payments.map((payment, index) => ({
            payment,
            status: toPublicView(sessions[index]!).status,
            timedOut: timedOut[index]!,
          }));
        });
        // The transfer went out but its bind was refused: reported (with the hash) and the exit code says so.
        const refused = results.some(({ payment }) => options.bind && !payment.bound && !payment.viaContract);
        const timedOut = results.some((result) => result.timedOut);
        if (options.json) {
          const json = results.map(({ payment, status, timedOut: late }) => ({
            session_id: payment.sessionId,
            tx_hash: payment.txHash,
            from: payment.from,
            to: payment.to,
            crypto_currency: payment.asset,
            amount: payment.amount,
            chain_id: payment.chainId,
            bound: payment.bound,
            not_bound_because: payment.notBoundBecause,
            via_contract: payment.viaContract,
            status,
            timed_out: late,
          }));
          printJson(json.length === 1 ? json[0] : json);
          // timed_out and not_bound_because in the JSON say so; the exit code too.
          if (timedOut || refused) commandRun().exitCode = 1;
          return;
        }
        for (const { payment, status } of results) {
          if (results.length > 1) printLine(`session ${payment.sessionId}`);
          const how = payment.viaContract ? ' through a contract' : '';
          const what = `${payment.amount} ${payment.asset}`;
          printLine(`sent ${what} from ${payment.from} to ${payment.to}${how} on chain ${payment.chainId}`);
          printLine(`tx_hash: ${payment.txHash}`);
          printLine(payment.bound ? 'bound to the session' : `not bound: ${payment.notBoundBecause}`);
          printLine(`status: ${status}`);
        }
        if (refused) commandRun().exitCode = 1;
        if (timedOut) {
          printProblem(
            `the status did not change within ${waitSeconds} s (is \`npm start\` running and watching the sandbox ` +
              `chain?)`,
            1,
          );
        }
      },
    );
}
