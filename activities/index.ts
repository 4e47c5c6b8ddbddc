import type { ActivityDeps } from './deps.js';
import { createCallbackActivities } from './callbacks.js';
import { createCaseActivities } from './cases.js';
import { createChildCaseActivities } from './child-cases.js';
import { createGenerationActivities } from './generation.js';
import { createConnectionActivities } from './connections.js';
import { createOAuthActivities } from './oauth.js';
import { createTaskActivities } from './tasks.js';
import { createScheduleActivities } from './schedules.js';
import { createRerunBatchActivities } from './rerun-batches.js';
import { createRetentionActivities } from './retention.js';

/** Every activity the worker registers, built over the worker's dependencies. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createCallbackActivities(deps),
    ...createCaseActivities(deps),
    ...createChildCaseActivities(deps),
    ...createGenerationActivities(deps),
    ...createConnectionActivities(deps),
    ...createOAuthActivities(deps),
    ...createTaskActivities(deps),
    ...createScheduleActivities(deps),
    ...createRerunBatchActivities(deps),
    ...createRetentionActivities(deps),
  };
}
