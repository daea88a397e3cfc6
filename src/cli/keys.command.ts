import type { Command } from 'commander';
import {
  createApiKey,
  listApiKeys,
  revokeApiKey,
  rotateApiKey,
  type IssuedApiKey,
} from '../domain/organisations/api-keys.js';
import { invalid } from '../domain/shared/errors.js';
import { rotateMasterKey } from '../domain/organisations/master-key-rotation.js';
import { createStoredSecretsStore } from '../db/organisations/stored-secrets.js';
import { printJson, printLine } from './output.js';
import { withRuntime } from './with-runtime.js';

function issuedJson(key: IssuedApiKey) {
  return {
    id: key.id,
    api_key: key.apiKey,
    api_secret: key.apiSecret,
    organisation_id: key.organisationId,
    created_at: key.createdAt.toISOString(),
  };
}

function printIssued(key: IssuedApiKey, json: boolean | undefined, extra: Record<string, string> = {}): void {
  if (json) return printJson({ ...issuedJson(key), ...extra });
  printLine(`api_key:    ${key.apiKey}`);
  printLine(`api_secret: ${key.apiSecret}`);
  printLine(`organisation_id: ${key.organisationId}`);
  for (const [name, value] of Object.entries(extra)) printLine(`${name}: ${value}`);
  printLine('The secret is shown only now: store it safely.');
}

export function registerKeyCommands(program: Command): void {
  const keys = program.command('keys').description('API keys for signed merchant calls');

  keys
    .command('create')
    .description('issue a new API key and secret for an organisation (the secret is shown only here)')
    .requiredOption('--org <id>', 'organisation id')
    .option('--json', 'print one JSON object')
    .action(async (options: { org: string; json?: boolean }) => {
      printIssued(await withRuntime((ctx) => createApiKey(ctx, options.org)), options.json);
    });

  keys
    .command('list')
    .description("list an organisation's API keys (never their secrets)")
    .requiredOption('--org <id>', 'organisation id')
    .option('--json', 'print a JSON array')
    .action(async (options: { org: string; json?: boolean }) => {
      const list = await withRuntime((ctx) => listApiKeys(ctx, options.org));
      if (options.json) {
        printJson(
          list.map((key) => ({
            id: key.id,
            api_key: key.apiKey,
            organisation_id: key.organisationId,
            state: key.state,
            created_at: key.createdAt.toISOString(),
            expires_at: key.expiresAt?.toISOString() ?? null,
            revoked_at: key.revokedAt?.toISOString() ?? null,
            last_used_at: key.lastUsedAt?.toISOString() ?? null,
          })),
        );
        return;
      }
      for (const key of list) {
        printLine(
          `${key.apiKey}  ${key.state}  created ${key.createdAt.toISOString()}  last used ` +
            `${key.lastUsedAt?.toISOString() ?? 'never'}`,
        );
      }
    });

  keys
    .command('revoke')
    .description('revoke an API key at once')
    .argument('<key>', 'the public API key (pk_…)')
    .action(async (key: string) => {
      await withRuntime((ctx) => revokeApiKey(ctx, key));
      printLine(`revoked ${key}`);
    });

  keys
    .command('rotate')
    .description('issue a replacement key; the old one keeps working for --grace-minutes')
    .argument('<key>', 'the public API key (pk_…) to replace')
    .option('--grace-minutes <n>', 'minutes the old key stays valid', '1440')
    .option('--json', 'print one JSON object')
    .action(async (key: string, options: { graceMinutes: string; json?: boolean }) => {
      const grace = Number(options.graceMinutes);
      if (!/^\d+$/.test(options.graceMinutes) || grace > 525_600)
        throw invalid('--grace-minutes must be a whole number from 0 to 525600');
      const issued = await withRuntime((ctx) => rotateApiKey(ctx, key, grace));
      printIssued(issued, options.json, { replaces: key, old_key_expires_at: issued.oldKeyExpiresAt.toISOString() });
    });

  keys
    .command('rotate-master')
    .description(
      're-seal every stored secret (API keys, webhook endpoints; v1 ones as v2) under KASSA_MASTER_KEY, opening them ' +
        'with it or KASSA_MASTER_KEY_PREVIOUS',
    )
    .option('--json', 'print one JSON object')
    .action(async (options: { json?: boolean }) => {
      const rotation = await withRuntime((ctx, runtime) =>
        rotateMasterKey(ctx.masterKey, createStoredSecretsStore(runtime.db.prisma)),
      );
      const counts = (c: { resealed: number; alreadyCurrent: number }) => ({
        resealed: c.resealed,
        already_current: c.alreadyCurrent,
      });
      if (options.json) {
        printJson({
          key_id: rotation.keyId,
          api_key_secrets: counts(rotation.apiKeySecrets),
          webhook_secrets: counts(rotation.webhookSecrets),
          v1_resealed: rotation.v1Resealed,
          v1_remaining: rotation.v1Remaining,
        });
        return;
      }
      printLine(
        `re-sealed ${rotation.apiKeySecrets.resealed} API key secrets and ${rotation.webhookSecrets.resealed} ` +
          `webhook secrets under master key ${rotation.keyId}` +
          (rotation.v1Resealed > 0 ? ` (${rotation.v1Resealed} of them from the v1 format)` : '') +
          `; ${rotation.apiKeySecrets.alreadyCurrent} and ${rotation.webhookSecrets.alreadyCurrent} already were` +
          (rotation.v1Remaining === 0 ? '; no v1 secret remains: KASSA_SECRETS_V1=refuse may be set' : ''),
      );
    });
}
