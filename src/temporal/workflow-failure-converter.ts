import { DefaultFailureConverter, TemporalFailure, type FailureConverter } from '@temporalio/common';

const sealed = new DefaultFailureConverter({ encodeCommonAttributes: true });
const clear = new DefaultFailureConverter();

/**
 * Failure messages and stack traces go into the failure's encoded attributes, a payload the codec
 * encrypts, instead of plain text in the history (a Python node's error can quote a case's data),
 * except for the errors `keepClear` picks, which say what an operator must fix and quote no case data.
 * Decoding reads either form.
 */
export function sealingFailureConverter(keepClear: (err: unknown) => boolean): FailureConverter {
  return {
    errorToFailure: (err, payloadConverter, context) =>
      (keepClear(err) ? clear : sealed).errorToFailure(err, payloadConverter, context),
    failureToError: (failure, payloadConverter, context) => sealed.failureToError(failure, payloadConverter, context),
  };
}

/**
 * Bundled into the workflow code (scripts/bundle-workflows.ts), so deterministic. A run's own failure
 * (an ApplicationFailure carrying the failed node's message) is sealed; a plain Error fails the workflow
 * task, not the run, and is workflow code refusing a task (a revision it does not know) or a bug: kept
 * readable for the operator.
 */
export const failureConverter = sealingFailureConverter((err) => !(err instanceof TemporalFailure));
