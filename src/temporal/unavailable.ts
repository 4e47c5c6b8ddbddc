import { ServiceError, isGrpcServiceError } from '@temporalio/client';
import { status } from '@grpc/grpc-js';

/** True when a Temporal call failed because the server could not be reached, not because it refused the call. */
export function isTemporalUnavailable(err: unknown): boolean {
  const grpc = err instanceof ServiceError ? err.cause : err;
  return isGrpcServiceError(grpc) && (grpc.code === status.UNAVAILABLE || grpc.code === status.DEADLINE_EXCEEDED);
}
