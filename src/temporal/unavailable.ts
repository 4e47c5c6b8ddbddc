import { ServiceError, isGrpcServiceError } from '@temporalio/client';
import { status } from '@grpc/grpc-js';

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
