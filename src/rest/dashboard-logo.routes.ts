import { Router, type Request } from 'express';
import type { DomainContext } from '../domain/context.js';
import { setLogoFromDashboard, type DashboardSettings } from '../domain/dashboard/merchant-admin.js';
import { clientAddressOf } from '../http/client-address.js';
import {
  principalOf,
  requireCsrfToken,
  requireSameOrigin,
  type DashboardCookieOptions,
} from '../http/dashboard-session.js';
import { methodNotAllowed } from '../http/error-handler.js';
import { rawBytes } from '../http/json-body.js';

/**
 * The logo from the dashboard's settings page (docs/dashboard.md#links-keys-and-settings): `PUT` the image's bytes as
 * the body (its type is told by its bytes, not by Content-Type), `DELETE` to remove it.
 */
export function dashboardLogoRouter(ctx: DomainContext, options: DashboardCookieOptions): Router {
  const router = Router();
  const path = '/dashboard/api/organisations/:organisationId/logo';
  const change = async (req: Request) => {
    requireSameOrigin(req, ctx.checkoutBaseUrl);
    const principal = await principalOf(ctx, req, options);
    requireCsrfToken(req, principal, {});
    return principal;
  };
  const view = (settings: DashboardSettings) => ({
    logo_sha256: settings.logoSha256,
    logo_url: settings.logoSha256 ? `/brand/logo/${settings.logoSha256}` : null,
  });

  router.put(path, async (req, res) => {
    const principal = await change(req);
    const organisationId = req.params.organisationId as string;
    const logo = Buffer.from(rawBytes(req));
    res.json(view(await setLogoFromDashboard(ctx, principal, organisationId, logo, clientAddressOf(req))));
  });
  router.delete(path, async (req, res) => {
    const principal = await change(req);
    const organisationId = req.params.organisationId as string;
    res.json(view(await setLogoFromDashboard(ctx, principal, organisationId, null, clientAddressOf(req))));
  });
  router.all(path, methodNotAllowed(['PUT', 'DELETE']));
  return router;
}
