import { Option, type Command } from 'commander';
import { z } from 'zod';
import { memberRoles, taskStatuses } from '../../domain/human-tasks.js';
import { clientAction, noOptions, pairs } from './command.js';
import { CliError, exitCodes } from './errors.js';
import { collectPair, typedValues } from './inputs.js';
import { indent, show } from './output.js';
import type { Session } from './session.js';

type Task = Awaited<ReturnType<typeof details>>;
interface Summary {
  taskId: string;
  status: string;
  title: string;
  caseId: string;
  dueAt: string | null;
}

const details = (session: Session, taskId: string) =>
  session.call(session.client.GET('/api/v1/tasks/{taskId}', { params: { path: { taskId } } }));

const summaryLine = (t: Summary) =>
  `${t.taskId}  ${t.status.padEnd(9)}  ${t.title}  (case ${t.caseId})${t.dueAt ? `, due ${t.dueAt}` : ''}`;

const assigneeText = (a: Task['assignee']) =>
  a.type === 'user' ? `user ${a.user_id}` : a.type === 'role' ? `the ${a.role}s` : 'the workspace';

/** The form's fields: name, type(s), and whether it may be left out. */
const formLines = (form: Task['form']) =>
  Object.values(form.schema).map(
    (v) =>
      `${v.variable_name}: ${v.allowed_types.map((t) => t.type).join(' | ')}${v.is_optional ? ' (optional)' : ''}${v.description ? `  ${v.description}` : ''}`,
  );

const taskLines = (t: Task) => [
  summaryLine(t),
  `node ${t.nodeName} of workflow ${t.workflowId}; assigned to ${assigneeText(t.assignee)}${t.claimedBy ? `, claimed by ${t.claimedBy}` : ''}`,
  ...(t.instructions ? ['instructions:', ...indent(t.instructions.split('\n'))] : []),
  'form:',
  ...indent(formLines(t.form)),
  ...(t.outputs ? [`outputs: ${show(t.outputs)}${t.decidedVia ? ` (via ${t.decidedVia})` : ''}`] : []),
  'history:',
  ...indent(t.history.map((h) => `${h.at}  ${h.action}${h.actorUserId ? ` by ${h.actorUserId}` : ''}`)),
];

/** A form's field types by variable_name (a field of one type types its --output value; others go as JSON or text). */
const formTypes = (form: Task['form']) =>
  Object.fromEntries(
    Object.values(form.schema).map((v) => [
      v.variable_name,
      v.allowed_types.length === 1 ? v.allowed_types[0] : undefined,
    ]),
  );

/** `caseflow task list|show|claim|release|reassign|complete|link`: the human tasks cases wait on. */
export function registerTaskCommands(program: Command): void {
  const tasks = program.command('task').description('human tasks: list, read, claim, decide');

  clientAction(
    tasks
      .command('list')
      .description('tasks of the cases the key reads, newest first')
      .addOption(new Option('--status <status>', 'only tasks with this status').choices(taskStatuses))
      .option('--assignee <who>', '"me" (tasks the key’s user may take) or a user id')
      .option('--case <caseId>', 'only tasks of this case')
      .option('--workflow <workflow>', 'only tasks of this workflow (id or name)'),
    z.tuple([
      z.object({
        status: z.enum(taskStatuses).optional(),
        assignee: z.string().optional(),
        case: z.string().optional(),
        workflow: z.string().optional(),
      }),
    ]),
    async ({ session, out }, [opts]) => {
      const s = session();
      const workflowId = opts.workflow ? (await s.requireWorkflow(opts.workflow)).workflowId : undefined;
      const query = { status: opts.status, assignee: opts.assignee, caseId: opts.case, workflowId, limit: 100 };
      const page = await s.call(s.client.GET('/api/v1/tasks', { params: { query } }));
      out.result(page.items, () => (page.items.length ? page.items.map(summaryLine) : ['no tasks']));
    },
  );

  clientAction(
    tasks.command('show <taskId>').description('a task: instructions, form, assignee, history'),
    z.tuple([z.string(), noOptions]),
    async ({ session, out }, [taskId]) => {
      const task = await details(session(), taskId);
      out.result(task, () => taskLines(task));
    },
  );

  for (const action of ['claim', 'release'] as const) {
    clientAction(
      tasks
        .command(`${action} <taskId>`)
        .description(
          action === 'claim'
            ? 'take an open task: only you (or Case: Full) decide it until released'
            : 'give a claimed task back',
        ),
      z.tuple([z.string(), noOptions]),
      async ({ session, out }, [taskId]) => {
        const s = session();
        const params = { params: { path: { taskId } } };
        const task = await s.call(
          action === 'claim'
            ? s.client.POST('/api/v1/tasks/{taskId}/claim', params)
            : s.client.POST('/api/v1/tasks/{taskId}/release', params),
        );
        out.result(task, () => [summaryLine(task)]);
      },
    );
  }

  clientAction(
    tasks
      .command('reassign <taskId>')
      .description('hand the task to a user, the members with a role, or the whole workspace (one of the three)')
      .option('--user <userId>', 'one user of the organization')
      .addOption(new Option('--role <role>', 'the members with this role').choices(memberRoles))
      .option('--workspace', "anyone with Case: Read in the task's workspace", false),
    z.tuple([
      z.string(),
      z.object({ user: z.string().optional(), role: z.enum(memberRoles).optional(), workspace: z.boolean() }),
    ]),
    async ({ session, out }, [taskId, opts]) => {
      const chosen = [opts.user, opts.role, opts.workspace || undefined].filter((v) => v !== undefined);
      if (chosen.length !== 1) throw new CliError('give one of --user, --role, --workspace', exitCodes.usage);
      const assignee = opts.user
        ? { type: 'user' as const, user_id: opts.user }
        : opts.role
          ? { type: 'role' as const, role: opts.role }
          : { type: 'workspace' as const };
      const s = session();
      const task = await s.call(
        s.client.POST('/api/v1/tasks/{taskId}/reassign', { params: { path: { taskId } }, body: { assignee } }),
      );
      out.result(task, () => [summaryLine(task), `assigned to ${assigneeText(task.assignee)}`]);
    },
  );

  clientAction(
    tasks
      .command('complete <taskId>')
      .description('submit the form: the case takes the decision and goes on')
      .option('-o, --output <name=value>', 'a form field (repeatable); typed by the form', collectPair),
    z.tuple([z.string(), z.object({ output: pairs })]),
    async ({ session, out }, [taskId, opts]) => {
      const s = session();
      const form = (await details(s, taskId)).form;
      const outputs = typedValues(opts.output, formTypes(form));
      const task = await s.call(
        s.client.POST('/api/v1/tasks/{taskId}/complete', { params: { path: { taskId } }, body: { outputs } }),
      );
      out.result(task, () => [summaryLine(task), `outputs: ${show(task.outputs)}`]);
    },
  );

  clientAction(
    tasks
      .command('link <taskId>')
      .description('a single-use completion page for a person without a key (the URL is shown once)'),
    z.tuple([z.string(), noOptions]),
    async ({ session, out }, [taskId]) => {
      const s = session();
      const link = await s.call(s.client.POST('/api/v1/tasks/{taskId}/link', { params: { path: { taskId } } }));
      out.result(link, () => [link.url, `single use; expires ${link.expiresAt}; shown once`]);
    },
  );
}
