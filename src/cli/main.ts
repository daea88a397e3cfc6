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
import { reportFailure, printJson, printLine } from './output.js';

const program = new Command('kassa').description('Kassa, self-hosted crypto checkout: operator CLI').showHelpAfterError();
// Usage errors (missing option, unknown command) exit 2 like other invalid input; commander prints them.
program.exitOverride();

program
  .command('serve')
  .description('run the HTTP server (PORT, default 3000), applying migrations first')
  .action(async () => {
    const config = loadConfig();
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
    const db = await openDatabase(loadConfig(), { role: 'cli', poolSize: 2 });
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

program.parseAsync(process.argv).catch(reportFailure);
