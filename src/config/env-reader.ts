import { redactUrl } from './redact-url.js';

export type Env = Readonly<Record<string, string | undefined>>;

/**
 * Typed reads of environment variables. A bad value is recorded in `problems`
 * (so every problem is reported together) and the fallback is returned.
 */
export class EnvReader {
  constructor(
    private readonly env: Env,
    readonly problems: string[],
  ) {}

  optional(name: string): string | null {
    const value = this.env[name]?.trim();
    return value ? value : null;
  }

  string(name: string, fallback: string): string {
    return this.optional(name) ?? fallback;
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const value = this.optional(name);
    if (value === null) return fallback;
    if (!/^-?\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      this.problems.push(`${name} must be a whole number from ${min} to ${max} (got "${value}")`);
      return fallback;
    }
    return Number(value);
  }

  number(name: string, fallback: number, min: number, max: number): number {
    const value = this.optional(name);
    if (value === null) return fallback;
    if (!/^\d+(\.\d+)?$/.test(value) || Number(value) < min || Number(value) > max) {
      this.problems.push(`${name} must be a number from ${min} to ${max} (got "${value}")`);
      return fallback;
    }
    return Number(value);
  }

  boolean(name: string, fallback: boolean): boolean {
    const value = this.optional(name)?.toLowerCase();
    if (value === undefined || value === null) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(value)) return true;
    if (['0', 'false', 'no', 'off'].includes(value)) return false;
    this.problems.push(`${name} must be true or false (got "${value}")`);
    return fallback;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.optional(name);
    if (value === null) return fallback;
    if (!(allowed as readonly string[]).includes(value)) {
      this.problems.push(`${name} must be one of ${allowed.join(', ')} (got "${value}")`);
      return fallback;
    }
    return value as T;
  }

  url(name: string, fallback: string): string {
    const value = this.string(name, fallback);
    try {
      const url = new URL(value);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
    } catch {
      this.problems.push(`${name} must be an http(s) URL (got "${redactUrl(value)}")`);
    }
    return value;
  }

  list(name: string, fallback: readonly string[]): string[] {
    const value = this.optional(name);
    if (value === null) return [...fallback];
    return value
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  }
}
