import type { Command } from 'commander';
import { CLI_ACTOR } from '../domain/dashboard/actors.js';
import { passkeysOfAccount, removePasskeyAsOperator } from '../domain/dashboard/passkeys.js';
import { disableUser, inviteUser, listUsers } from '../domain/dashboard/users.js';
import { printJson, printLine } from './output.js';
import { withRuntime } from './with-runtime.js';

/** `kassa users`: the dashboard's accounts (docs/dashboard.md#accounts). */
export function registerUserCommands(program: Command): void {
  const users = program.command('users').description('dashboard users and their roles');

  users
    .command('invite')
    .description('invite a person into an organisation; prints a one-time link (24 h) where they set a password')
    .requiredOption('--org <id>', 'organisation id')
    .requiredOption('--email <address>', "the person's e-mail address")
    .requiredOption('--role <role>', 'owner, admin, developer, support or viewer')
    .option('--json', 'print one JSON object')
    .action(async (options: { org: string; email: string; role: string; json?: boolean }) => {
      const invitation = await withRuntime((ctx) =>
        inviteUser(ctx, { organisationId: options.org, email: options.email, role: options.role }, CLI_ACTOR),
      );
      const { url } = invitation;
      if (options.json)
        return printJson({
          user_id: invitation.userId,
          email: invitation.email,
          role: invitation.role,
          invite_url: url,
          expires_at: invitation.expiresAt?.toISOString() ?? null,
        });
      printLine(`invited ${invitation.email} as ${invitation.role}`);
      if (url) {
        printLine(`one-time link (until ${invitation.expiresAt!.toISOString()}):`);
        printLine(url);
      } else printLine('the account exists already: it signs in with its own password');
    });

  users
    .command('list')
    .description("list an organisation's dashboard users and roles")
    .requiredOption('--org <id>', 'organisation id')
    .option('--json', 'print a JSON array')
    .action(async (options: { org: string; json?: boolean }) => {
      const list = await withRuntime((ctx) => listUsers(ctx, options.org, CLI_ACTOR));
      if (options.json)
        return printJson(
          list.map((user) => ({
            id: user.id,
            email: user.email,
            role: user.role,
            state: user.state,
            created_at: user.createdAt.toISOString(),
          })),
        );
      for (const user of list) printLine(`${user.email}  ${user.role}  ${user.state}  ${user.id}`);
    });

  users
    .command('disable')
    .description('disable a dashboard account everywhere and end its sessions at once')
    .argument('<user>', 'e-mail address or user id')
    .action(async (who: string) => {
      const user = await withRuntime((ctx) => disableUser(ctx, who));
      printLine(`disabled ${user.email}; its sessions are ended`);
    });

  const passkeys = users.command('passkeys').description("a dashboard account's passkeys");
  passkeys
    .command('list')
    .description("list an account's passkeys (name, added, last used, id)")
    .argument('<user>', 'e-mail address or user id')
    .option('--json', 'print a JSON array')
    .action(async (who: string, options: { json?: boolean }) => {
      const account = await withRuntime((ctx) => passkeysOfAccount(ctx, who));
      const rows = account.passkeys.map((passkey) => ({
        id: passkey.id,
        name: passkey.name,
        created_at: passkey.createdAt.toISOString(),
        last_used_at: passkey.lastUsedAt?.toISOString() ?? null,
      }));
      if (options.json) return printJson(rows);
      if (rows.length === 0) printLine(`${account.email} has no passkey`);
      for (const row of rows)
        printLine(`${row.name}  ${row.created_at}  ${row.last_used_at ?? 'never used'}  ${row.id}`);
    });
  passkeys
    .command('remove')
    .description('remove a passkey (a lost device): it signs in nowhere from now on')
    .argument('<passkey>', 'passkey id (kassa users passkeys list)')
    .action(async (id: string) => {
      const removed = await withRuntime((ctx) => removePasskeyAsOperator(ctx, id));
      printLine(`removed passkey ${removed.name} (${removed.id})`);
    });
}
