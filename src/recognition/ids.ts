/** Ids of requests (and of the other records the API names in paths): UUIDs. */

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `s` is a UUID (any version, either case). */
export function isUuid(s: string): boolean {
  return UUID_RE.test(s);
}
