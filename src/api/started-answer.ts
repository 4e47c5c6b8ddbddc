import type { Response } from 'express';

/** The Content-Type express's `res.json` gives an answer (mime-types adds the charset). */
const jsonType = 'application/json; charset=utf-8';

/**
 * A JSON answer with a body to a POST that starts work (a case's initiate and execute, a hook's delivery), written
 * with the body, Content-Type and Content-Length `res.json` writes, and no ETag: a POST's answer is not
 * revalidated (conditional requests are GET's and HEAD's), and `res.json` also parses and re-formats the
 * Content-Type and looks its settings up on every answer: 18-60 µs of CPU per request on this machine (performance.md).
 */
export function sendStartedAnswer(res: Response, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.status(status);
  res.setHeader('Content-Type', jsonType);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
