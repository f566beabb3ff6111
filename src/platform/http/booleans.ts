// Spec 1.9: booleans are `true` or `false`; `1`/`0` and `yes`/`no` also work.
const TRUE = new Set(['true', '1', 'yes']);
const FALSE = new Set(['false', '0', 'no']);

export function parseBoolean(value: string): boolean | null {
  const v = value.trim().toLowerCase();
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  return null;
}
