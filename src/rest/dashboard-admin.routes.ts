import { Router, type Request } from 'express';
import QRCode from 'qrcode';
import type { DomainContext } from '../domain/context.js';
import {
  createKeyFromDashboard,
  createLinkFromDashboard,
  listKeysForDashboard,
  listLinksForDashboard,
  readLinkForDashboard,
  readSettingsForDashboard,
  revokeKeyFromDashboard,
  updateLinkFromDashboard,
  updateSettingsFromDashboard,
  type DashboardSettings,
} from '../domain/dashboard/merchant-admin.js';
import type { ApiKeySummary } from '../domain/organisations/api-keys.js';
import type { PaymentLink } from '../domain/payment-links/payment-link.js';
import { toPaymentLinkView } from '../domain/payment-links/payment-link.views.js';
import { invalid } from '../domain/shared/errors.js';
import { isUuid } from '../domain/shared/uuid.js';
import { clientAddressOf } from '../http/client-address.js';
import {
  principalOf,
  readFields,
  requireCsrfToken,
  requireSameOrigin,
  type DashboardCookieOptions,
} from '../http/dashboard-session.js';
import { methodNotAllowed } from '../http/error-handler.js';
import { readJsonBody } from '../http/json-body.js';
import { parseCreatePaymentLink, parseUpdatePaymentLink } from './payment-links.schema.js';

/**
 * Links, keys and settings for the dashboard (docs/dashboard.md#links-keys-and-settings): link bodies are checked by
 * the schema of `POST`/`PATCH /payment-links`; changes pass the origin and CSRF checks, the use-case the role.
 */
export function dashboardAdminRouter(ctx: DomainContext, options: DashboardCookieOptions): Router {
  const router = Router();
  const base = '/dashboard/api/organisations/:organisationId';
  const org = (req: Request) => req.params.organisationId as string;
  const linkView = (link: PaymentLink) => toPaymentLinkView(link, ctx.checkoutBaseUrl, ctx.clock());
  const keyView = (key: ApiKeySummary) => ({
    id: key.id,
    api_key: key.apiKey,
    state: key.state,
    created_at: key.createdAt.toISOString(),
    expires_at: key.expiresAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null,
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
  });
  const settingsView = (settings: DashboardSettings) => ({
    brand_color: settings.brandColor,
    logo_sha256: settings.logoSha256,
    underpayment_tolerance_percent: settings.underpaymentTolerancePercent,
    late_payment_window_minutes: settings.latePaymentWindowMinutes,
  });
  /** A state change: Kassa's own origin, a session, its CSRF token (header for JSON). */
  const change = async (req: Request) => {
    requireSameOrigin(req, ctx.checkoutBaseUrl);
    const principal = await principalOf(ctx, req, options);
    requireCsrfToken(req, principal, {});
    return { principal, address: clientAddressOf(req) };
  };
  const accept = <T>(parsed: { ok: true; value: T } | { ok: false; problems: string[] }): T => {
    if (!parsed.ok) throw invalid(parsed.problems);
    return parsed.value;
  };
  const linkId = (req: Request) => {
    const id = req.params.id as string;
    if (!isUuid(id)) throw invalid(['id must be a UUID']);
    return id.toLowerCase();
  };

  router.get(`${base}/payment-links`, async (req, res) => {
    const principal = await principalOf(ctx, req, options);
    res.json({ data: (await listLinksForDashboard(ctx, principal, org(req))).map(linkView) });
  });
  router.post(`${base}/payment-links`, async (req, res) => {
    const { principal, address } = await change(req);
    const input = accept(parseCreatePaymentLink(readJsonBody(req)));
    res.status(201).json(linkView(await createLinkFromDashboard(ctx, principal, org(req), input, address)));
  });
  router.all(`${base}/payment-links`, methodNotAllowed(['GET', 'POST']));
  router.patch(`${base}/payment-links/:id`, async (req, res) => {
    const { principal, address } = await change(req);
    const patch = accept(parseUpdatePaymentLink(readJsonBody(req)));
    res.json(linkView(await updateLinkFromDashboard(ctx, principal, org(req), linkId(req), patch, address)));
  });
  router.all(`${base}/payment-links/:id`, methodNotAllowed(['PATCH']));
  // The link's address as a QR code, made here: the page loads nothing from elsewhere.
  router.get(`${base}/payment-links/:id/qr.svg`, async (req, res) => {
    const principal = await principalOf(ctx, req, options);
    const link = await readLinkForDashboard(ctx, principal, org(req), linkId(req));
    const svg = await QRCode.toString(linkView(link).url, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
    res.type('image/svg+xml').set('Cache-Control', 'private, max-age=300').send(svg);
  });

  router.get(`${base}/api-keys`, async (req, res) => {
    const principal = await principalOf(ctx, req, options);
    res.json({ data: (await listKeysForDashboard(ctx, principal, org(req))).map(keyView) });
  });
  router.post(`${base}/api-keys`, async (req, res) => {
    const { principal, address } = await change(req);
    const issued = await createKeyFromDashboard(ctx, principal, org(req), address);
    res.status(201).set('Cache-Control', 'no-store').json({
      id: issued.id,
      api_key: issued.apiKey,
      api_secret: issued.apiSecret,
      created_at: issued.createdAt.toISOString(),
    });
  });
  router.all(`${base}/api-keys`, methodNotAllowed(['GET', 'POST']));
  router.post(`${base}/api-keys/:id/revoke`, async (req, res) => {
    const { principal, address } = await change(req);
    res.json(keyView(await revokeKeyFromDashboard(ctx, principal, org(req), req.params.id as string, address)));
  });
  router.all(`${base}/api-keys/:id/revoke`, methodNotAllowed(['POST']));

  router.get(`${base}/settings`, async (req, res) => {
    const principal = await principalOf(ctx, req, options);
    res.json(settingsView(await readSettingsForDashboard(ctx, principal, org(req))));
  });
  router.patch(`${base}/settings`, async (req, res) => {
    const { principal, address } = await change(req);
    const fields = readFields(req);
    const settings = await updateSettingsFromDashboard(
      ctx,
      principal,
      org(req),
      {
        brandColor: fields.brand_color,
        underpaymentTolerancePercent: fields.underpayment_tolerance_percent,
        latePaymentWindowMinutes: fields.late_payment_window_minutes,
      },
      address,
    );
    res.json(settingsView(settings));
  });
  router.all(`${base}/settings`, methodNotAllowed(['GET', 'PATCH']));
  return router;
}
