import type { ActivityDeps } from './deps.js';

/** Activities of the retention run; the rules live in the retention service. */
export function createRetentionActivities({ services }: ActivityDeps) {
  const { retention } = services;
  return {
    purgeRetentionBatch() {
      return retention.purgeBatch();
    },
    reclaimStoreSpace() {
      return retention.reclaimSpace();
    },
  };
}

export type RetentionActivities = ReturnType<typeof createRetentionActivities>;
