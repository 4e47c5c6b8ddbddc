/** Secrets shorter than this are not redacted: replacing "a" or "1" everywhere would garble every text. */
const MIN_SECRET_LENGTH = 4;
export const REDACTED = '[redacted]';

/** The string values of a credential (numbers as text too), longest first, so a secret containing another is cut whole. */
export function secretStrings(data: Record<string, unknown>): string[] {
  const found = new Set<string>();
  const visit = (value: unknown): void => {
    if (typeof value === 'string' || typeof value === 'number') {
      const text = String(value);
      if (text.length >= MIN_SECRET_LENGTH) found.add(text);
    } else if (Array.isArray(value)) value.forEach(visit);
    else if (typeof value === 'object' && value !== null) Object.values(value).forEach(visit);
  };
  visit(data);
  return [...found].sort((a, b) => b.length - a.length);
}

export function redactText(text: string, secrets: string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join(REDACTED);
  return out;
}

/** A JSON value with every occurrence of a secret (in strings and keys) replaced. */
export function redactValue<T>(value: T, secrets: string[]): T {
  if (secrets.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redactText(v, secrets);
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v === 'object' && v !== null)
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [redactText(k, secrets), walk(x)]));
    return v;
  };
  return walk(value) as T;
}
