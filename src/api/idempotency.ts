import type { Request, Response } from 'express';
import type { AuthContext } from '../domain/auth-context.js';
import type { Answer, IdempotentRequests } from '../idempotency/idempotent-requests.js';
import { parseOrThrow } from './route.js';
import { startIdempotencyHeaders } from './schemas/common.js';
import { sendStartedAnswer } from './started-answer.js';

/** The request's Idempotency-Key, checked (400 when malformed); undefined when none was sent. */
function idempotencyKeyOf(req: Request): string | undefined {
  return parseOrThrow(startIdempotencyHeaders, { 'idempotency-key': req.get('idempotency-key') }, 'header')[
    'idempotency-key'
  ];
}

/** Sends an answer, marked as a replay when it is the first request's. */
export function sendAnswer(res: Response, outcome: { answer: Answer; replayed: boolean }): void {
  if (outcome.replayed) res.set('Idempotency-Replayed', 'true');
  sendStartedAnswer(res, outcome.answer.status, outcome.answer.body);
}

/**
 * Answers a case start once per Idempotency-Key of the caller's organization: with a key, the first
 * answer to this route and body is stored and a retry gets it again (nothing is created); without
 * one, the request simply runs.
 */
export async function answerIdempotently(
  requests: IdempotentRequests,
  auth: AuthContext,
  http: { req: Request; res: Response; body: unknown },
  produce: () => Promise<Answer>,
): Promise<void> {
  const key = idempotencyKeyOf(http.req);
  if (key === undefined) {
    sendAnswer(http.res, { answer: await produce(), replayed: false });
    return;
  }
  const request = { method: http.req.method, path: http.req.path, body: http.body };
  sendAnswer(
    http.res,
    await requests.run({ organizationId: auth.organizationId, scope: 'api', key, request }, produce),
  );
}
