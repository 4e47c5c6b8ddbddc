import type { z } from 'zod';
import type { TaskDetails } from '../../tasks/task-service.js';
import type { TaskRecord } from '../../domain/human-tasks.js';
import type { taskListSchema, taskSchema, taskSummarySchema } from '../schemas/tasks.js';

function taskSummaryView(task: TaskRecord): z.infer<typeof taskSummarySchema> {
  return {
    taskId: task.id,
    status: task.status,
    title: task.title,
    workspaceId: task.workspaceId,
    caseId: task.caseId,
    workflowId: task.workflowId,
    nodeId: task.nodeId,
    nodeName: task.nodeName,
    assignee: task.assignee,
    claimedBy: task.claimedBy,
    dueAt: task.dueAt,
    escalated: task.escalated,
    createdAt: task.createdAt,
    decidedAt: task.decidedAt,
  };
}

export function taskView({ task, history }: TaskDetails): z.infer<typeof taskSchema> {
  return {
    ...taskSummaryView(task),
    instructions: task.instructions,
    form: task.form,
    outputs: task.outputs,
    decidedBy: task.decidedBy,
    decidedVia: task.decidedVia,
    history,
  };
}

export function taskListView(page: { items: TaskRecord[]; nextCursor: string | null }): z.infer<typeof taskListSchema> {
  return { items: page.items.map(taskSummaryView), nextCursor: page.nextCursor };
}
