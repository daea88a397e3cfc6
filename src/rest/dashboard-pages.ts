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

function page(title: string, body: string, script = false): string {
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
${script ? '<script src="/dashboard/assets/link.js"></script>' : ''}
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
</form>`,
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
    true,
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
    true,
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
<form class="inline" method="post" action="/dashboard/sign-out">${csrf}<button type="submit">Sign out</button></form>
<form class="inline" method="post" action="/dashboard/sign-out-everywhere">${csrf}
<button type="submit">Sign out everywhere</button></form>`,
  );
}
