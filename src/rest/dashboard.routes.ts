import { Router, type Request, type Response } from 'express';
import type { DomainContext } from '../domain/context.js';
import { DomainError } from '../domain/shared/errors.js';
import { readAuditLog, readOrganisation } from '../domain/dashboard/audit-log.js';
import {
  acceptInvite,
  redeemSignInLink,
  roleIn,
  signIn,
  SignInThrottled,
  signOut,
  signOutEverywhere,
  type Principal,
  type StartedSession,
} from '../domain/dashboard/sign-in.js';
import { inviteUser, listUsers } from '../domain/dashboard/users.js';
import { listPasskeys } from '../domain/dashboard/passkeys.js';
import { clientAddressOf } from '../http/client-address.js';
import { accountPage, DASHBOARD_CSP, homePage, invitePage, signInLinkPage, signInPage } from './dashboard-pages.js';
import {
  clearSessionCookie,
  isFormPost,
  principalOf,
  readFields,
  requireCsrfToken,
  requireSameOrigin,
  setSessionCookie,
  type DashboardCookieOptions,
} from '../http/dashboard-session.js';
import { WEB_DIR } from './hosted-page.js';
import { methodNotAllowed, STATUS_BY_CODE } from '../http/error-handler.js';
import { dashboardAdminRouter } from './dashboard-admin.routes.js';
import { dashboardLiveRouter, type SessionChangeSource } from './dashboard-live.routes.js';
import { dashboardLogoRouter } from './dashboard-logo.routes.js';
import { dashboardPasskeysRouter } from './dashboard-passkeys.routes.js';
import { dashboardUiRouter } from './dashboard-ui.routes.js';

function sendPage(res: Response, status: number, html: string): void {
  res
    .status(status)
    .set({
      'Content-Security-Policy': DASHBOARD_CSP,
      'X-Frame-Options': 'DENY',
      'Referrer-Policy': 'same-origin',
      'Cache-Control': 'no-store',
    })
    .type('html')
    .send(html);
}

const ASSETS: Record<string, string> = {
  'dashboard.css': 'text/css',
  'link.js': 'text/javascript',
  'passkeys.js': 'text/javascript',
  'logo.js': 'text/javascript',
  // the views' modules (the frame loads views.js, which imports the page's module)
  'views.js': 'text/javascript',
  'page-context.js': 'text/javascript',
  'sessions.js': 'text/javascript',
  'webhooks.js': 'text/javascript',
  'payment-links.js': 'text/javascript',
  'api-keys.js': 'text/javascript',
  'settings.js': 'text/javascript',
};

/**
 * /dashboard: accounts and roles (docs/dashboard.md). Every state change passes the same-origin check first and,
 * where a session is used, the session's CSRF token; every read and write checks the role server-side.
 */
export function dashboardRouter(
  ctx: DomainContext,
  options: DashboardCookieOptions,
  changes?: SessionChangeSource,
): Router {
  const router = Router();

  router.get('/dashboard/assets/:file', (req, res, next) => {
    const type = ASSETS[req.params.file];
    if (!type) return next();
    res.type(type).set('Cache-Control', 'no-cache').sendFile(`${WEB_DIR}dashboard/${req.params.file}`);
  });

  /** Starts the session: JSON clients get who they are and the CSRF token, forms go to the dashboard. */
  const started = (req: Request, res: Response, session: StartedSession) => {
    setSessionCookie(req, res, session, options);
    if (isFormPost(req)) return res.redirect(303, '/dashboard');
    res.status(200).json({ user_id: session.userId, csrf_token: session.csrfToken });
  };
  /** A form's refusal is the form again with the reason; a JSON client's goes to the error handler. */
  const refused = (req: Request, res: Response, error: unknown, form: (message: string) => string) => {
    if (error instanceof SignInThrottled) res.set('Retry-After', String(error.retryAfterSeconds));
    if (!(error instanceof DomainError) || !isFormPost(req)) throw error;
    sendPage(res, STATUS_BY_CODE[error.code], form(error.message));
  };

  router.get('/dashboard/sign-in', (_req, res) => sendPage(res, 200, signInPage()));
  router.post('/dashboard/sign-in', async (req, res) => {
    requireSameOrigin(req, ctx.checkoutBaseUrl);
    const fields = readFields(req);
    try {
      const email = fields.email ?? '';
      const session = await signIn(ctx, { email, password: fields.password ?? '' }, clientAddressOf(req));
      started(req, res, session);
    } catch (error) {
      refused(req, res, error, (message) => signInPage(message, fields.email ?? ''));
    }
  });

  router.get('/dashboard/invite', (_req, res) => sendPage(res, 200, invitePage()));
  router.post('/dashboard/invite', async (req, res) => {
    requireSameOrigin(req, ctx.checkoutBaseUrl);
    const fields = readFields(req);
    try {
      const input = { token: fields.token ?? '', password: fields.password ?? '' };
      started(req, res, await acceptInvite(ctx, input, clientAddressOf(req)));
    } catch (error) {
      refused(req, res, error, invitePage);
    }
  });

  router.get('/dashboard/sign-in-link', (_req, res) => sendPage(res, 200, signInLinkPage()));
  router.post('/dashboard/sign-in-link', async (req, res) => {
    requireSameOrigin(req, ctx.checkoutBaseUrl);
    const fields = readFields(req);
    try {
      started(req, res, await redeemSignInLink(ctx, fields.token ?? '', clientAddressOf(req)));
    } catch (error) {
      refused(req, res, error, signInLinkPage);
    }
  });

  /** A state change by a signed-in person: same origin, a live session, its CSRF token. */
  const signedChange = async (req: Request) => {
    requireSameOrigin(req, ctx.checkoutBaseUrl);
    const fields = readFields(req);
    const principal = await principalOf(ctx, req, options);
    requireCsrfToken(req, principal, fields);
    return { principal, fields };
  };
  const signedOut = (req: Request, res: Response) => {
    clearSessionCookie(req, res, options);
    if (isFormPost(req)) return res.redirect(303, '/dashboard/sign-in');
    res.status(204).end();
  };

  router.post('/dashboard/sign-out', async (req, res) => {
    const { principal } = await signedChange(req);
    await signOut(ctx, principal);
    signedOut(req, res);
  });
  router.post('/dashboard/sign-out-everywhere', async (req, res) => {
    const { principal } = await signedChange(req);
    await signOutEverywhere(ctx, principal, clientAddressOf(req));
    signedOut(req, res);
  });

  router.get('/dashboard', async (req, res) => {
    let principal: Principal;
    try {
      principal = await principalOf(ctx, req, options);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'unauthorised') return res.redirect(303, '/dashboard/sign-in');
      throw error;
    }
    sendPage(res, 200, homePage(principal));
  });

  // The JSON API the dashboard's pages use (phase 2 adds the merchant GraphQL beside it).
  router.get('/dashboard/api/me', async (req, res) => {
    const principal = await principalOf(ctx, req, options);
    res.json({
      user_id: principal.userId,
      email: principal.email,
      csrf_token: principal.csrfToken,
      organisations: principal.memberships.map((m) => ({
        id: m.organisationId,
        name: m.organisationName,
        role: m.role,
      })),
    });
  });
  router.get('/dashboard/api/organisations/:organisationId', async (req, res) => {
    const principal = await principalOf(ctx, req, options);
    const organisation = await readOrganisation(ctx, principal, req.params.organisationId);
    res.json({
      id: organisation.id,
      name: organisation.name,
      role: organisation.role,
      wallets: organisation.wallets,
      underpayment_tolerance_percent: organisation.underpaymentTolerancePercent,
      created_at: organisation.createdAt.toISOString(),
    });
  });
  router.get('/dashboard/api/organisations/:organisationId/users', async (req, res) => {
    const principal = await principalOf(ctx, req, options);
    const { organisationId } = req.params;
    const actor = { kind: 'user', userId: principal.userId, role: roleIn(principal, organisationId) } as const;
    const users = await listUsers(ctx, organisationId, { ...actor, address: clientAddressOf(req) });
    res.json(
      users.map((user) => ({
        id: user.id,
        email: user.email,
        role: user.role,
        state: user.state,
        created_at: user.createdAt.toISOString(),
      })),
    );
  });
  router.post('/dashboard/api/organisations/:organisationId/invites', async (req, res) => {
    const { principal, fields } = await signedChange(req);
    const { organisationId } = req.params;
    const actor = {
      kind: 'user',
      userId: principal.userId,
      role: roleIn(principal, organisationId),
      address: clientAddressOf(req),
    } as const;
    const invitation = await inviteUser(
      ctx,
      { organisationId, email: fields.email ?? '', role: fields.role ?? '' },
      actor,
    );
    res.status(201).json({
      user_id: invitation.userId,
      email: invitation.email,
      role: invitation.role,
      invite_url: invitation.url,
      expires_at: invitation.expiresAt?.toISOString() ?? null,
    });
  });
  router.get('/dashboard/api/organisations/:organisationId/audit-log', async (req, res) => {
    const principal = await principalOf(ctx, req, options);
    const before = typeof req.query.before === 'string' ? req.query.before : undefined;
    const entries = await readAuditLog(ctx, principal, req.params.organisationId, before);
    res.json(
      entries.map((entry) => ({
        id: entry.id,
        action: entry.action,
        user_id: entry.userId,
        user_email: entry.userEmail,
        details: entry.details,
        address: entry.address,
        created_at: entry.createdAt.toISOString(),
      })),
    );
  });

  router.get('/dashboard/account', async (req, res) => {
    let principal: Principal;
    try {
      principal = await principalOf(ctx, req, options);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'unauthorised') return res.redirect(303, '/dashboard/sign-in');
      throw error;
    }
    sendPage(res, 200, accountPage(principal, await listPasskeys(ctx, principal.userId)));
  });

  router.use(dashboardPasskeysRouter(ctx, options));
  router.use(dashboardUiRouter(ctx, options));
  router.use(dashboardAdminRouter(ctx, options));
  router.use(dashboardLogoRouter(ctx, options));
  router.use(dashboardLiveRouter(ctx, options, changes));

  for (const path of ['/dashboard/sign-in', '/dashboard/invite', '/dashboard/sign-in-link'])
    router.all(path, methodNotAllowed(['GET', 'POST']));
  for (const path of ['/dashboard/sign-out', '/dashboard/sign-out-everywhere'])
    router.all(path, methodNotAllowed(['POST']));
  return router;
}
