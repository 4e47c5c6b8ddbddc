import { ServiceError, isGrpcServiceError } from '@temporalio/client';
import { status } from '@grpc/grpc-js';
import { NoAnswerInTimeError } from './engine-health.js';

/**
 * True when a Temporal call failed because the server could not be reached or did not answer in time, not because
 * it refused the call. The native client reports its own deadline passing as CANCELLED ("Timeout expired"), not
 * DEADLINE_EXCEEDED: the server may still carry the call out.
 */
export function isTemporalUnavailable(err: unknown): boolean {
  const grpc = err instanceof ServiceError ? err.cause : err;
  return (
    isGrpcServiceError(grpc) &&
    (grpc.code === status.UNAVAILABLE || grpc.code === status.DEADLINE_EXCEEDED || grpc.code === status.CANCELLED)
  );
}

/**
 * True when a call got no answer: Temporal unreachable, or silent past our own bound (`within`). The call may still
 * have been carried out, so what it did is to be found out, not assumed undone.
 */
export function isTemporalUnanswered(err: unknown): boolean {
  return err instanceof NoAnswerInTimeError || isTemporalUnavailable(err);
}
