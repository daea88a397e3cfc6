import { Command } from 'commander';
import { loadConfig } from '../config.js';
import { createLogger } from '../logging.js';
import { startServer } from '../server.js';
import { openDatabase } from '../db/database.js';
import { registerOrganisationCommands } from './organisations.command.js';
import { registerKeyCommands } from './keys.command.js';
import { registerDemoCommand } from './demo.command.js';
import { registerDevCommands } from './dev.command.js';
import { registerPaymentCommands } from './payments.command.js';
import { registerWebhookCommands } from './webhooks.command.js';
import { registerLinkCommands } from './links.command.js';
import { registerRefundCommands } from './refunds.command.js';
import { registerUserCommands } from './users.command.js';
import { registerContractsCommands } from './contracts.command.js';
import { registerCollectCommand } from './collect.command.js';
import { reportFailure, printJson, printLine } from './output.js';
import { terminal, withCommandRun, type Terminal } from './terminal.js';

function buildProgram(io: Terminal): Command {
  const program = new Command('kassa')
    .description('Kassa, self-hosted crypto checkout: operator CLI')
    .showHelpAfterError();
  // Usage errors (missing option, unknown command) exit 2 like other invalid input; commander prints them.
  // Both settings are copied to every subcommand created after them.
  program.exitOverride();
  program.configureOutput({ writeOut: (text) => io.stdout(text), writeErr: (text) => io.stderr(text) });

  program
    .command('serve')
    .description('run the HTTP server (PORT, default 3000), applying migrations first')
    .action(async () => {
      const config = loadConfig(terminal().env);
      const logger = createLogger(config.logLevel);
      const running = await startServer(config, logger);
      const shutdown = (signal: string) => {
        logger.info({ signal }, 'shutting down');
        running.stop().then(
          () => process.exit(0),
          (error) => {
            logger.error({ err: error }, 'shutdown failed');
            process.exit(1);
          },
        );
      };
      process.once('SIGINT', () => shutdown('SIGINT'));
      process.once('SIGTERM', () => shutdown('SIGTERM'));
    });

  program
    .command('migrate')
    .description('apply pending database migrations (recorded in _prisma_migrations)')
    .option('--json', 'print the result as JSON')
    .action(async (options: { json?: boolean }) => {
      const db = await openDatabase(loadConfig(terminal().env), { role: 'cli', poolSize: 2 });
      try {
        const result = await db.migrate();
        if (options.json) printJson(result);
        else printLine(result.applied.length ? `applied: ${result.applied.join(', ')}` : 'database is up to date');
      } finally {
        await db.close();
      }
    });

  registerOrganisationCommands(program);
  registerKeyCommands(program);
  registerDemoCommand(program);
  registerPaymentCommands(program);
  registerDevCommands(program);
  registerWebhookCommands(program);
  registerLinkCommands(program);
  registerRefundCommands(program);
  registerUserCommands(program);
  registerContractsCommands(program);
  registerCollectCommand(program);
  return program;
}

/**
 * Runs one `kassa` command (`args` without `node kassa`); returns its exit code (output.ts), a failure being one
 * `kassa: …` line on stderr. `serve` returns once the server listens.
 */
export function runCli(args: readonly string[], io: Terminal): Promise<number> {
  const run = { terminal: io, exitCode: 0 };
  return withCommandRun(run, async () => {
    try {
      await buildProgram(io).parseAsync([...args], { from: 'user' });
      return run.exitCode;
    } catch (error) {
      return reportFailure(error);
    }
  });
}
