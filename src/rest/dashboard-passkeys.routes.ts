import { Router, type Request, type Response } from 'express';
import type { DomainContext } from '../domain/context.js';
import {
  listPasskeys,
  passkeyRegistrationOptions,
  passkeySignInOptions,
  registerPasskey,
  removeOwnPasskey,
  signInWithPasskey,
  type PasskeySummary,
} from '../domain/dashboard/passkeys.js';
import { SignInThrottled } from '../domain/dashboard/sign-in.js';
import { clientAddressOf } from '../http/client-address.js';
import {
  isFormPost,
  principalOf,
  readFields,
  requireCsrfToken,
  requireSameOrigin,
  setSessionCookie,
  type DashboardCookieOptions,
} from '../http/dashboard-session.js';
import { methodNotAllowed } from '../http/error-handler.js';
import { HttpError } from '../http/http-error.js';
import { readJsonBody } from '../http/json-body.js';

const passkeyView = (passkey: PasskeySummary) => ({
  id: passkey.id,
  name: passkey.name,
  created_at: passkey.createdAt.toISOString(),
  last_used_at: passkey.lastUsedAt?.toISOString() ?? null,
});

/** A JSON object body (the browser's credential is nested, so readFields would drop it). */
function jsonObject(req: Request): Record<string, unknown> {
  const body = readJsonBody(req);
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new HttpError(400, ['Request body must be a JSON object']);
  return body as Record<string, unknown>;
}

/**
 * Passkeys (docs/dashboard.md#passkeys): sign-in ceremonies under /dashboard/passkeys, a signed-in person's own
 * passkeys under /dashboard/api/passkeys. Every POST passes the same-origin check; changes the session's CSRF token.
 */
export function dashboardPasskeysRouter(ctx: DomainContext, options: DashboardCookieOptions): Router {
  const router = Router();

  router.post('/dashboard/passkeys/sign-in-options', async (req, res) => {
    requireSameOrigin(req, ctx.checkoutBaseUrl);
    res.set('Cache-Control', 'no-store').json(await passkeySignInOptions(ctx));
  });
  router.post('/dashboard/passkeys/sign-in', async (req: Request, res: Response) => {
    requireSameOrigin(req, ctx.checkoutBaseUrl);
    const body = jsonObject(req);
    try {
      const session = await signInWithPasskey(ctx, body.credential, clientAddressOf(req));
      setSessionCookie(req, res, session, options);
      res.status(200).json({ user_id: session.userId, csrf_token: session.csrfToken });
    } catch (error) {
      if (error instanceof SignInThrottled) res.set('Retry-After', String(error.retryAfterSeconds));
      throw error;
    }
  });

  const change = async (req: Request) => {
    requireSameOrigin(req, ctx.checkoutBaseUrl);
    const principal = await principalOf(ctx, req, options);
    return principal;
  };

  router.get('/dashboard/api/passkeys', async (req, res) => {
    const principal = await principalOf(ctx, req, options);
    res.json({ data: (await listPasskeys(ctx, principal.userId)).map(passkeyView) });
  });
  router.post('/dashboard/api/passkeys/registration-options', async (req, res) => {
    const principal = await change(req);
    requireCsrfToken(req, principal, {});
    res.set('Cache-Control', 'no-store').json(await passkeyRegistrationOptions(ctx, principal));
  });
  router.post('/dashboard/api/passkeys', async (req, res) => {
    const principal = await change(req);
    requireCsrfToken(req, principal, {});
    const body = jsonObject(req);
    const passkey = await registerPasskey(
      ctx,
      principal,
      { name: body.name, credential: body.credential },
      clientAddressOf(req),
    );
    res.status(201).json(passkeyView(passkey));
  });
  router.post('/dashboard/api/passkeys/:id/remove', async (req, res) => {
    const principal = await change(req);
    requireCsrfToken(req, principal, readFields(req));
    await removeOwnPasskey(ctx, principal, req.params.id as string, clientAddressOf(req));
    if (isFormPost(req)) return res.redirect(303, '/dashboard/account');
    res.status(204).end();
  });

  for (const path of ['/dashboard/passkeys/sign-in-options', '/dashboard/passkeys/sign-in'])
    router.all(path, methodNotAllowed(['POST']));
  router.all('/dashboard/api/passkeys', methodNotAllowed(['GET', 'POST']));
  router.all('/dashboard/api/passkeys/registration-options', methodNotAllowed(['POST']));
  router.all('/dashboard/api/passkeys/:id/remove', methodNotAllowed(['POST']));
  return router;
}
