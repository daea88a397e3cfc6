import type { Command } from 'commander';
import {
  createOrganisation,
  findOrganisation,
  listOrganisations,
  setPaymentPolicy,
  setWallet,
} from '../domain/organisations/organisations.js';
import type { Organisation } from '../domain/organisations/organisation-ports.js';
import { printJson, printLine } from './output.js';
import { readFile } from 'node:fs/promises';
import { logoPath, setBranding } from '../domain/organisations/branding.js';
import { invalid } from '../domain/shared/errors.js';
import { withRuntime } from './with-runtime.js';

/** The JSON shape of an organisation in CLI output (a contract other tools rely on). */
export function organisationJson(organisation: Organisation) {
  return {
    id: organisation.id,
    name: organisation.name,
    wallets: { ...organisation.wallets },
    receiving_mode: organisation.receivingMode,
    underpayment_tolerance_percent: organisation.underpaymentTolerancePercent.toFixed(2),
    late_payment_window_minutes: organisation.latePaymentWindowMinutes,
    created_at: organisation.createdAt.toISOString(),
  };
}

function describe(organisation: Organisation): string {
  const wallets = Object.entries(organisation.wallets).map(([network, address]) => `${network}=${address}`);
  // The shared wallet says nothing, so shared-wallet organisations' lines keep their form; deposit mode is named.
  const mode = organisation.receivingMode === 'deposit_addresses' ? '  receiving by deposit addresses' : '';
  return `${organisation.id}  ${organisation.name}  ${wallets.length ? wallets.join(' ') : '(no wallet)'}${mode}`;
}

const RECEIVING_OPTION = 'deposit (a deposit address per session) or shared (unique amounts on the shared wallet)';

/** Deposit mode needs the factory on each network; said where the mode is chosen. */
const DEPOSIT_FACTORY_NOTE =
  'deposit mode: the deposit factory must be deployed on each of its networks (`kassa contracts deploy --network ' +
  '<slug>`); production refuses to start without it';

/** In deposit mode a wallet change moves only new sessions' addresses: said wherever a wallet is set. */
const DEPOSIT_WALLET_NOTE =
  'deposit mode: new sessions get addresses leading to this wallet; older sessions keep addresses that lead only to ' +
  'the wallet they were made for (`kassa collect` moves their money there)';

export function registerOrganisationCommands(program: Command): void {
  const orgs = program.command('orgs').description('organisations (merchants)');

  orgs
    .command('create')
    .description('create an organisation')
    .requiredOption('--name <name>', 'organisation name')
    .option('--wallet <address>', 'receiving wallet (0x…); for every enabled network unless --network is given')
    .option('--network <slug>', 'the network the --wallet is for')
    .option(
      '--receiving <mode>',
      `${RECEIVING_OPTION}; default deposit where the deposit factory is deployed on all its networks, else shared`,
    )
    .option('--json', 'print one JSON object')
    .action(
      async (options: { name: string; wallet?: string; network?: string; receiving?: string; json?: boolean }) => {
        const organisation = await withRuntime((ctx) =>
          createOrganisation(ctx, {
            name: options.name,
            wallet: options.wallet,
            network: options.network,
            receiving: options.receiving,
          }),
        );
        if (options.json) printJson(organisationJson(organisation));
        else {
          printLine(describe(organisation));
          printLine(`receiving mode: ${organisation.receivingMode} (${organisation.receivingReason})`);
          if (options.receiving !== undefined && organisation.receivingMode === 'deposit_addresses')
            printLine(DEPOSIT_FACTORY_NOTE);
        }
      },
    );

  orgs
    .command('list')
    .description('list organisations')
    .option('--json', 'print a JSON array')
    .action(async (options: { json?: boolean }) => {
      const organisations = await withRuntime((ctx) => listOrganisations(ctx));
      if (options.json) printJson(organisations.map(organisationJson));
      else organisations.forEach((organisation) => printLine(describe(organisation)));
    });

  orgs
    .command('show')
    .description('show one organisation: wallets, receiving mode, payment policy')
    .argument('<id>', 'organisation id')
    .option('--json', 'print one JSON object')
    .action(async (id: string, options: { json?: boolean }) => {
      const organisation = await withRuntime((ctx) => findOrganisation(ctx, id));
      if (options.json) printJson(organisationJson(organisation));
      else
        printLine(
          `${describe(organisation)}  tolerance ${organisation.underpaymentTolerancePercent.toFixed(2)}%  late ` +
            `window ${organisation.latePaymentWindowMinutes} min  receiving ${organisation.receivingMode}`,
        );
    });

  orgs
    .command('policy')
    .description(
      "set an organisation's payment policy (underpayment tolerance, late-payment window) and receiving mode",
    )
    .requiredOption('--org <id>', 'organisation id')
    .option('--underpayment-tolerance <percent>', 'received ≥ required × (1 − percent/100) counts as paid (default 0)')
    .option(
      '--late-window-minutes <minutes>',
      'after expiry, transfers are recorded as late payments for this long (default 1440)',
    )
    .option('--receiving <mode>', `${RECEIVING_OPTION}; for sessions created from now on`)
    .option('--json', 'print one JSON object')
    .action(
      async (options: {
        org: string;
        underpaymentTolerance?: string;
        lateWindowMinutes?: string;
        receiving?: string;
        json?: boolean;
      }) => {
        const organisation = await withRuntime((ctx) =>
          setPaymentPolicy(ctx, options.org, {
            underpaymentTolerancePercent: options.underpaymentTolerance,
            latePaymentWindowMinutes: options.lateWindowMinutes,
            receiving: options.receiving,
          }),
        );
        if (options.json) printJson(organisationJson(organisation));
        else {
          printLine(
            `${describe(organisation)}  tolerance ${organisation.underpaymentTolerancePercent.toFixed(2)}%  late ` +
              `window ${organisation.latePaymentWindowMinutes} min`,
          );
          if (options.receiving !== undefined && organisation.receivingMode === 'deposit_addresses')
            printLine(DEPOSIT_FACTORY_NOTE);
        }
      },
    );

  orgs
    .command('update')
    .description("set the organisation's logo and brand colour on the hosted pages (/pay and /l)")
    .requiredOption('--org <id>', 'organisation id')
    .option(
      '--logo <file>',
      'a PNG or WebP file of at most 100 KB, stored in the database and served by Kassa; "none" removes it',
    )
    .option('--brand-color <hex>', 'brand colour #rrggbb for the top bar and buttons; "none" removes it')
    .option('--json', 'print one JSON object')
    .action(async (options: { org: string; logo?: string; brandColor?: string; json?: boolean }) => {
      if (options.logo === undefined && options.brandColor === undefined)
        throw invalid(['give --logo and/or --brand-color']);
      let logo: Buffer | null | undefined;
      if (options.logo !== undefined && options.logo !== 'none') {
        try {
          logo = await readFile(options.logo);
        } catch (error) {
          throw invalid([
            `logo file ${options.logo} cannot be read: ` +
              `${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
          ]);
        }
      } else if (options.logo === 'none') logo = null;
      const brandColor =
        options.brandColor === undefined ? undefined : options.brandColor === 'none' ? null : options.brandColor;
      const branding = await withRuntime((ctx) => setBranding(ctx, options.org, { brandColor, logo }));
      const view = {
        id: options.org,
        name: branding.organisationName,
        brand_color: branding.brandColor,
        logo_url: branding.logoSha256 ? logoPath(branding.logoSha256) : null,
      };
      if (options.json) printJson(view);
      else
        printLine(
          `${view.id}  ${view.name}  colour ${view.brand_color ?? '(default)'}  logo ${view.logo_url ?? '(none)'}`,
        );
    });

  program
    .command('wallets')
    .description('receiving wallets')
    .command('set')
    .description("set an organisation's receiving wallet on a network (or every enabled network)")
    .requiredOption('--org <id>', 'organisation id')
    .requiredOption('--address <address>', 'wallet address (0x…)')
    .option('--network <slug>', 'network slug; every enabled network when omitted')
    .option('--json', 'print one JSON object')
    .action(async (options: { org: string; address: string; network?: string; json?: boolean }) => {
      const organisation = await withRuntime((ctx) => setWallet(ctx, options.org, options.address, options.network));
      if (options.json) printJson(organisationJson(organisation));
      else {
        printLine(describe(organisation));
        if (organisation.receivingMode === 'deposit_addresses') printLine(DEPOSIT_WALLET_NOTE);
      }
    });
}
