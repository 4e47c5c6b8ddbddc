/**
 * Icons are base64 SVG or PNG without a `data:` prefix. The bytes are decoded
 * and checked, so a caller cannot store arbitrary content under the name of an
 * icon.
 */
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Padded standard base64, as the document's `pattern` for icons states it. */
export const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** An SVG document: optional BOM, XML declaration, comments and doctype, then the <svg> root. */
const SVG_ROOT =
  /^\uFEFF?\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--[\s\S]*?-->\s*)*(?:<!DOCTYPE[^>]*>\s*)?(?:<!--[\s\S]*?-->\s*)*<svg[\s>/]/i;
/** Active content a browser would run if the icon were ever inlined. */
const SVG_ACTIVE = /<script|<foreignObject|\son[a-z]+\s*=|javascript:/i;

/** Why the icon is refused, or undefined when it is a well-formed base64 PNG or SVG. */
export function iconProblem(icon: string): string | undefined {
  if (/^data:/i.test(icon.trim())) return 'icon is plain base64 without a data: prefix';
  if (icon.length === 0 || !BASE64.test(icon)) return 'icon is not valid base64';
  const bytes = Buffer.from(icon, 'base64');
  if (bytes.subarray(0, PNG_MAGIC.length).equals(PNG_MAGIC)) return undefined;
  const text = bytes.toString('utf8');
  if (!SVG_ROOT.test(text)) return 'icon is neither a PNG nor an SVG image';
  if (SVG_ACTIVE.test(text)) return 'icon SVG carries scripts or event handlers';
  return undefined;
}
