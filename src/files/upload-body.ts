import type { IncomingMessage } from 'node:http';

const uploadPath = /^\/api\/v1\/file\/upload\/[^/?]+(\?|$)/;

/**
 * The JSON body parser's `type` test. A PUT to a presigned upload URL is the
 * file itself, streamed to storage whatever its content type: parsing it
 * (a .json file sent as application/json) would eat the bytes and apply the
 * JSON body limit instead of the 10 MB file limit.
 */
export function parsesAsJson(req: IncomingMessage): boolean {
  if (req.method === 'PUT' && uploadPath.test(req.url ?? '')) return false;
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  return type === 'application/json';
}
