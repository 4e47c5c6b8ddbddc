/**
 * Schedules: what a Temporal Schedule fires (the workflow, its inputs, an
 * optional version pin) and a copy of its timing and policies, so lists need
 * no call to Temporal. Temporal holds the schedule itself (`schedule-<id>`).
 */
export interface ScheduleTable {
  id: string;
  organization_id: string;
  workspace_id: string;
  /** caseflow's workflow id. */
  workflow_id: string;
  /** A pinned version; null runs the latest active version at each firing. */
  workflow_version_id: string | null;
  /** The cases' title. */
  title: string | null;
  /** JSON ScheduleTiming: cron or interval, time zone, start/end. */
  spec: string;
  /** JSON object: the case inputs keyed by variable name. */
  inputs: string;
  callback_url: string | null;
  /** skip | buffer_one | allow_all | cancel_previous */
  overlap: string;
  /** At most schedules.maxCatchupWindowSeconds (7 days by default): an integer column holds it. */
  catchup_window_ms: number;
  /** 0/1, as last set through the API. */
  paused: number;
  created_by_key_id: string;
  created_by_user_id: string;
  created_at: string;
  updated_at: string;
}

/** One firing the worker handled: the case it created, or why none was. */
export interface ScheduleFiringTable {
  id: string;
  schedule_id: string;
  temporal_workflow_id: string;
  scheduled_at: string;
  /** started | failed */
  status: string;
  case_id: string | null;
  error: string | null;
  created_at: string;
}

export interface ScheduleTables {
  schedules: ScheduleTable;
  schedule_firings: ScheduleFiringTable;
}
