import type { Command } from 'commander';
import { devPay } from '../chain/dev-pay.js';
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
    .argument('<session-id>', 'checkout session id')
    .option('--amount <amount>', 'amount of the asset to send (default: what is still owed)')
    .option(
      '--asset <ticker>',
      'asset to pay in when the session has none selected yet (default: the first offered on local)',
    )
    .option('--account <n>', 'sandbox account that pays (2–9; 1 is the demo merchant wallet)', '2')
    .option('--no-bind', 'only send the transfer; do not bind it to the session')
    .option('--wait [seconds]', 'wait until the session leaves its current status (default 30 s)')
    .option('--json', 'print one JSON object')
    .action(
      async (
        sessionId: string,
        options: {
          amount?: string;
          asset?: string;
          account: string;
          bind: boolean;
          wait?: boolean | string;
          json?: boolean;
        },
      ) => {
        if (!/^[2-9]$/.test(options.account)) throw invalid('--account must be a sandbox payer account from 2 to 9');
        const waitSeconds = options.wait === undefined ? 0 : options.wait === true ? 30 : Number(options.wait);
        if (!Number.isFinite(waitSeconds) || waitSeconds < 0 || waitSeconds > 600)
          throw invalid('--wait must be a number of seconds from 0 to 600');
        const result = await withRuntime(async (ctx) => {
          const before = await getCheckoutSession(ctx, sessionId);
          const payment = await devPay(ctx, sessionId, {
            amount: options.amount,
            asset: options.asset,
            account: Number(options.account),
            bind: options.bind,
          });
          let session = await getCheckoutSession(ctx, sessionId);
          const deadline = Date.now() + waitSeconds * 1000;
          // The running server's watcher credits the payment; a status change shows it did.
          while (waitSeconds > 0 && session.status === before.status && Date.now() < deadline) {
            await new Promise((resolve) => setTimeout(resolve, 250));
            session = await getCheckoutSession(ctx, sessionId);
          }
          const timedOut = waitSeconds > 0 && session.status === before.status;
          return { payment, status: toPublicView(session).status, timedOut };
        });
        const { payment, status, timedOut } = result;
        // The transfer went out but its bind was refused: reported (with the hash) and the exit code says so.
        const refused = options.bind && !payment.bound;
        if (options.json) {
          printJson({
            session_id: payment.sessionId,
            tx_hash: payment.txHash,
            from: payment.from,
            to: payment.to,
            crypto_currency: payment.asset,
            amount: payment.amount,
            chain_id: payment.chainId,
            bound: payment.bound,
            not_bound_because: payment.notBoundBecause,
            status,
            timed_out: timedOut,
          });
          // timed_out and not_bound_because in the JSON say so; the exit code too.
          if (timedOut || refused) commandRun().exitCode = 1;
          return;
        }
        printLine(
          `sent ${payment.amount} ${payment.asset} from ${payment.from} to ${payment.to} on chain ${payment.chainId}`,
        );
        printLine(`tx_hash: ${payment.txHash}`);
        printLine(payment.bound ? 'bound to the session' : `not bound: ${payment.notBoundBecause}`);
        printLine(`status: ${status}`);
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
