import { timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';

/** Whether the request carries `Authorization: Bearer <token>`, compared in constant time. */
export function bearerMatches(req: Request, token: string): boolean {
  const header = req.headers.authorization;
  const presented = Buffer.from(header?.startsWith('Bearer ') ? header.slice(7) : '');
  const expected = Buffer.from(token);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}
