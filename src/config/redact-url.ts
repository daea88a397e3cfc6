/**
 * URLs as a log may show them: scheme and host only, as providers put keys in user info, path, query or fragment
 * (`/***` marks what was cut). The host follows the last `@`; one that does not look like a host prints as `***`.
 */
export function redactUrl(text: string): string {
  const [, scheme = '', rest = ''] = /^([a-z][a-z0-9+.-]*:\/\/)?([\s\S]*)$/i.exec(text)!;
  const afterUserInfo = rest.slice(rest.lastIndexOf('@') + 1);
  const hostEnd = afterUserInfo.search(/[/?#\\]/);
  const host = hostEnd === -1 ? afterUserInfo : afterUserInfo.slice(0, hostEnd);
  const more = host.length < rest.length;
  // Without an `@` there is no user info: what stands where the host stands is shown as typed.
  const shown =
    !rest.includes('@') || (HOST.test(host) && DOTTED_OR_BRACKETED.test(host)) || /^localhost(:\d+)?$/i.test(host)
      ? host
      : '***';
  return `${scheme}${shown}${more ? '/***' : ''}`;
}

// A DNS name (underscores allowed: container names), IPv4, or bracketed IPv6, with an optional numeric port.
const HOST =
  /^(?:[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*\.?|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

// After an `@`, a one-word "host" (`ops@KEY123`) is as likely a piece of a secret.
const DOTTED_OR_BRACKETED = /^(?:[^:]+\.[^:]+|\[.*\])(?::\d+)?$/;

// Anything that starts like a URL, up to white space or a quote.
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]*/gi;

/**
 * `text` with every URL in it redacted (redactUrl), for errors written to the log; not `file:` URLs, which name this
 * machine's files (a stack trace's frames), not credentials.
 */
export function redactUrlsIn(text: string): string {
  return text.replace(URL_IN_TEXT, (url) => (/^file:/i.test(url) ? url : redactUrl(url)));
}

/**
 * Whether a configured URL's host is unambiguous: no `@` after the first `/ ? # \`; otherwise an HTTP client would take
 * part of the user info for the host and send the rest to it.
 */
export function hasUnambiguousHost(text: string): boolean {
  const rest = text.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  const delimiter = rest.search(/[/?#\\]/);
  return delimiter === -1 || !rest.slice(delimiter).includes('@');
}
