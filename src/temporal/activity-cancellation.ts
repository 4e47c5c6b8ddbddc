import { Context } from '@temporalio/activity';

/**
 * The cancellation signal of the activity running this call, so a client
 * built once (the LLM's) aborts a request when its activity is cancelled (a
 * cancelled run, a worker shutting down). Only called inside an activity.
 */
export function activityCancellation(): AbortSignal {
  return Context.current().cancellationSignal;
}
