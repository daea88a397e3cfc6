const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a text is a UUID (any version, any case): ids are checked before they reach PostgreSQL. */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}
