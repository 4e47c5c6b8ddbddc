/**
 * `a=1,b=x` (an environment variable) as `{ a: 1, b: 'x' }`, each value read as JSON when it is; objects pass
 * through. A value may be a JSON object or array holding commas of its own (`a={"x":1,"y":"2s"},b=2`): pairs are
 * split only at commas outside braces, brackets and strings. A pair without `=`, or a value that opens an object,
 * an array or a string and does not parse, is left undefined for the schema to refuse.
 */
export function keyValues(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  return Object.fromEntries(topLevelParts(value).map(keyValue));
}

function keyValue(pair: string): [string, unknown] {
  const at = pair.indexOf('=');
  if (at <= 0) return [pair, undefined];
  const raw = pair.slice(at + 1);
  try {
    return [pair.slice(0, at), JSON.parse(raw) as unknown];
  } catch {
    // A bare word is a string (`temp_store=memory`); JSON cut short is a mistake, not a string.
    return [pair.slice(0, at), /^\s*[[{"]/.test(raw) ? undefined : raw];
  }
}

/** `text`'s comma-separated parts, trimmed, the commas inside `{}`, `[]` and JSON strings not separating. */
function topLevelParts(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted) {
      if (char === '\\') i++;
      else if (char === '"') quoted = false;
    } else if (char === '"') quoted = true;
    else if (char === '{' || char === '[') depth++;
    else if (char === '}' || char === ']') depth = Math.max(0, depth - 1);
    else if (char === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((part) => part.trim()).filter(Boolean);
}
