import type { PasskeySummary } from '../domain/dashboard/passkeys.js';
import type { Principal } from '../domain/dashboard/sign-in.js';

/**
 * The dashboard's server-made pages for accounts (sign-in, invite, the signed-in home with sign-out). Plain forms
 * that work without scripts; the one script reads one-time links' tokens from the fragment (web/dashboard/link.js).
 */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function page(title: string, body: string, script: false | 'link.js' | 'passkeys.js' = false): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${escapeHtml(title)} · Kassa dashboard</title>
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
${script ? `<script src="/dashboard/assets/${script}"></script>` : ''}
</body>
</html>
`;
}

function problem(message: string | null): string {
  return message ? `<p class="problem" role="alert">${escapeHtml(message)}</p>` : '';
}

export function signInPage(message: string | null = null, email = ''): string {
  return page(
    'Sign in',
    `${problem(message)}
<form method="post" action="/dashboard/sign-in">
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(email)}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
<div id="passkey-sign-in" hidden>
<p>Or, with a passkey registered on your account page:</p>
<button type="button" id="passkey-button">Sign in with a passkey</button>
<p id="passkey-status" role="status"></p>
</div>`,
    'passkeys.js',
  );
}

export function invitePage(message: string | null = null): string {
  return page(
    'Set your password',
    `${problem(message)}
<p>Choose a password of at least 12 characters for your Kassa dashboard account.</p>
<form method="post" action="/dashboard/invite" data-link="fill">
<input type="hidden" name="token" value="">
<label for="password">New password</label>
<input id="password" name="password" type="password" autocomplete="new-password" minlength="12" required>
<button type="submit">Set password and sign in</button>
</form>`,
    'link.js',
  );
}

export function signInLinkPage(message: string | null = null): string {
  return page(
    'Signing in',
    `${problem(message)}
<form method="post" action="/dashboard/sign-in-link" data-link="${message ? 'fill' : 'submit'}">
<input type="hidden" name="token" value="">
<button type="submit">Sign in</button>
</form>`,
    'link.js',
  );
}

export function homePage(principal: Principal): string {
  const rows = principal.memberships
    .map(
      (m) =>
        `<tr><td><a href="/dashboard/sessions?org=${escapeHtml(m.organisationId)}">` +
        `${escapeHtml(m.organisationName)}</a></td><td><code>${escapeHtml(m.organisationId)}</code></td>` +
        `<td>${escapeHtml(m.role)}</td></tr>`,
    )
    .join('\n');
  const csrf = `<input type="hidden" name="csrf_token" value="${escapeHtml(principal.csrfToken)}">`;
  return page(
    'Kassa dashboard',
    `<p>Signed in as <strong>${escapeHtml(principal.email)}</strong>.</p>
<table>
<caption>Your organisations</caption>
<thead><tr><th scope="col">Organisation</th><th scope="col">Id</th><th scope="col">Role</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
<p><a href="/dashboard/account">Your account and passkeys</a></p>
<form class="inline" method="post" action="/dashboard/sign-out">${csrf}<button type="submit">Sign out</button></form>
<form class="inline" method="post" action="/dashboard/sign-out-everywhere">${csrf}
<button type="submit">Sign out everywhere</button></form>`,
  );
}

const minute = (at: Date | null) => (at ? `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC` : 'never');

/** The signed-in person's account: their passkeys, each removable, and "Add a passkey" (web/dashboard/passkeys.js). */
export function accountPage(principal: Principal, passkeys: readonly PasskeySummary[]): string {
  const csrf = `<input type="hidden" name="csrf_token" value="${escapeHtml(principal.csrfToken)}">`;
  const rows = passkeys
    .map(
      (passkey) =>
        `<tr><td>${escapeHtml(passkey.name)}</td><td>${minute(passkey.createdAt)}</td>` +
        `<td>${minute(passkey.lastUsedAt)}</td><td><form class="inline" method="post" ` +
        `action="/dashboard/api/passkeys/${escapeHtml(passkey.id)}/remove">${csrf}` +
        `<button type="submit" aria-label="Remove passkey ${escapeHtml(passkey.name)}">Remove</button>` +
        '</form></td></tr>',
    )
    .join('\n');
  const table =
    passkeys.length === 0
      ? '<p id="passkeys-none">No passkey yet: you sign in with your password.</p>'
      : `<div class="scroll" role="region" aria-labelledby="passkeys-caption" tabindex="0"><table id="passkeys">
<caption id="passkeys-caption">Your passkeys</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Added</th><th scope="col">Last used</th>
<th scope="col">Remove</th></tr></thead>
<tbody>
${rows}
</tbody>
</table></div>`;
  return page(
    'Your account',
    `<p>Signed in as <strong>${escapeHtml(principal.email)}</strong>. <a href="/dashboard">Your organisations</a></p>
<h2>Passkeys</h2>
<p>A passkey signs you in without your password, with this device's screen lock or a security key.</p>
${table}
<form id="add-passkey" hidden>${csrf}
<label for="passkey-name">Name of the new passkey</label>
<input id="passkey-name" name="name" maxlength="64" placeholder="Laptop" autocomplete="off">
<button type="submit">Add a passkey</button>
</form>
<p id="passkey-status" role="status"></p>`,
    'passkeys.js',
  );
}
