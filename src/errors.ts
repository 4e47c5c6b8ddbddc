/**
 * Errors the domain raises: services, the store and the worker throw these and
 * never import HTTP. The API maps each code to its status (src/api/errors.ts);
 * the codes themselves are the contract's `errorCode` vocabulary.
 */
export type ErrorCode =
  | 'BAD_REQUEST'
  | 'VALIDATION_ERROR'
  | 'MALFORMED_JSON'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'UNPROCESSABLE'
  | 'RATE_LIMITED'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL_ERROR';

/** One bad field of a request, as `metadata.fields` lists it. */
export interface FieldProblem {
  field: string;
  message: string;
}

export class DomainError extends Error {
  constructor(
    readonly errorCode: ErrorCode,
    message: string,
    readonly metadata?: Record<string, unknown>,
    /** For errors that clear by themselves: when a retry may succeed. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'DomainError';
  }

  static badRequest(message: string, metadata?: Record<string, unknown>): DomainError {
    return new DomainError('BAD_REQUEST', message, metadata);
  }
  /**
   * The one shape of a field error: every bad field under `metadata.fields`, the first one in the
   * message. VALIDATION_ERROR unless the caller names the code its contract gives the problem.
   */
  static invalidFields(
    fields: readonly FieldProblem[],
    options: { errorCode?: ErrorCode; message?: string; metadata?: Record<string, unknown> } = {},
  ): DomainError {
    const first = fields[0];
    const message = options.message ?? (first ? `Invalid ${first.field}: ${first.message}` : 'Invalid request');
    return new DomainError(options.errorCode ?? 'VALIDATION_ERROR', message, { ...options.metadata, fields });
  }
  static unauthorized(message = 'Missing, invalid or expired API key'): DomainError {
    return new DomainError('UNAUTHORIZED', message);
  }
  static forbidden(message: string): DomainError {
    return new DomainError('FORBIDDEN', message);
  }
  static notFound(message: string): DomainError {
    return new DomainError('NOT_FOUND', message);
  }
  static conflict(message: string, metadata?: Record<string, unknown>): DomainError {
    return new DomainError('CONFLICT', message, metadata);
  }
  static tooLarge(message: string, metadata?: Record<string, unknown>): DomainError {
    return new DomainError('PAYLOAD_TOO_LARGE', message, metadata);
  }
  /**
   * A count limit reached (schedules of a workspace, bulk reruns running in an organization): a
   * conflict with what exists, which clears when one is deleted or ends, not with time (that is 429).
   */
  static limitReached(message: string, limit: { setting: string; max: number }): DomainError {
    return new DomainError('CONFLICT', message, { limit });
  }
  static unprocessable(message: string, metadata?: Record<string, unknown>): DomainError {
    return new DomainError('UNPROCESSABLE', message, metadata);
  }
  static rateLimited(message: string, retryAfterSeconds: number): DomainError {
    return new DomainError('RATE_LIMITED', message, { retryAfterSeconds }, retryAfterSeconds);
  }
  static unavailable(message: string, retryAfterSeconds: number): DomainError {
    return new DomainError('SERVICE_UNAVAILABLE', message, { retryAfterSeconds }, retryAfterSeconds);
  }
}
