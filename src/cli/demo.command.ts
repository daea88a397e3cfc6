import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { DEMO_BODY, readDemoCredentials } from '../demo.js';
import { signPayload } from '../domain/organisations/signatures.js';
import { printJson, printLine } from './output.js';
import { terminal } from './terminal.js';

/** `kassa demo`: creates a session on the running development server with the demo key. */
export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('create a checkout session on the running server with the demo key and print its checkout_url')
    .option('--url <url>', 'base URL of the running Kassa', undefined)
    .option('--json', 'print the whole response')
    .action(async (options: { url?: string; json?: boolean }) => {
      const config = loadConfig(terminal().env);
      const credentials = readDemoCredentials(config);
      if (!credentials)
        throw new Error(
          `no demo credentials in ${config.dataDir}: start the server once with \`npm start\` (development mode)`,
        );
      const baseUrl = options.url ?? `http://localhost:${config.port}`;
      const timestamp = String(Date.now());
      const response = await fetch(`${baseUrl}/checkout-sessions`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-Service-Key': credentials.apiKey,
          'X-Service-Timestamp': timestamp,
          'X-Service-Signature': signPayload(credentials.apiSecret, timestamp, DEMO_BODY),
        },
        body: DEMO_BODY,
      }).catch((error: Error) => {
        throw new Error(`cannot reach Kassa at ${baseUrl} (${error.message}); is \`npm start\` running?`);
      });
      const body = (await response.json()) as Record<string, unknown>;
      if (!response.ok) throw new Error(`create failed with ${response.status}: ${JSON.stringify(body.message)}`);
      if (options.json) return printJson(body);
      printLine(`session_id:   ${body.session_id}`);
      printLine(`status:       ${body.status}`);
      printLine(`total:        ${body.total_amount_fiat} ${body.fiat_currency}`);
      printLine(`checkout_url: ${body.checkout_url}`);
    });
}
