import { ServiceError, isGrpcServiceError } from '@temporalio/client';

// gRPC status codes (grpc/status.proto) for "the server did not answer in time or at all".
const DEADLINE_EXCEEDED = 4;
const UNAVAILABLE = 14;

/** True when a Temporal call failed because the server could not be reached, not because it refused the call. */
export function isTemporalUnavailable(err: unknown): boolean {
  const grpc = err instanceof ServiceError ? err.cause : err;
  return isGrpcServiceError(grpc) && (grpc.code === UNAVAILABLE || grpc.code === DEADLINE_EXCEEDED);
}
