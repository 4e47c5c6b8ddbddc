import { emptyBuild } from '../domain/generation/builds.js';
import type { PlanStep, StepBuild } from '../domain/generation/plan.js';
import { memberRoles } from '../domain/human-tasks.js';

/**
 * Steps a person does (docs/generation.md, "Steps for a person"): how the
 * offline planner recognises them in a prompt, the form they get, and what
 * the person is shown. They become `human_task` nodes whose first bool form
 * field routes two ways (approved or not).
 */

/** "send it for manager approval", "a manager approves", "ask the owner to review", "manual review". */
const personPattern =
  /\b(approval|sign[- ]?off|manual(?:ly)? review|human review|for review)\b|\b(manager|supervisor|approver|reviewer|admin|administrator|owner|lead|director|person|human|someone|team)\s+(?:must |should |has to |needs to |will |then )?(approves?|reviews?|signs? off|confirms?|decides?)\b|\bask (?:a|an|the) [a-z ]{1,30}? to (?:approve|review|confirm|decide|sign)\b/i;

/** Whether a clause asks a person to decide. */
export function needsPerson(text: string): boolean {
  return personPattern.test(text);
}

/**
 * "if approved, …" / "if the manager rejects it, …": which side of the last person's decision the words
 * after it take (`rest`); undefined when the clause is no such outcome.
 */
export function decisionOutcome(clause: string): { approved: boolean; rest: string } | undefined {
  const m =
    /^(?:if|when|once|whenever)\s+(?:(?:it|this|that|they|he|she|the [a-z]+(?: [a-z]+)?)\s+)?(?:is |are |was |gets? |has been )?(approved|approves?|accepted|accepts?|signs? off|rejected|rejects?|declined|declines?|denied|denies|refused|refuses?)\b(?:\s+(?:it|them|this|that))?\s*/i.exec(
      clause.trim(),
    );
  if (!m?.[1]) return undefined;
  return { approved: /^(approv|accept|sign)/i.test(m[1]), rest: clause.trim().slice(m[0].length) };
}

/** The form's decision field: "approved" for an approval, "completed" for other work a person does. */
export function decisionName(text: string): string {
  return /approv|reject|sign|authori[sz]|accept|decid|review|check|verif/i.test(text) ? 'approved' : 'completed';
}

/** A person step's form: the decision (its route) and a comment. */
export function personOutputs(text: string): PlanStep['outputs'] {
  return [
    { name: decisionName(text), type: 'bool' },
    { name: 'comment', type: 'str' },
  ];
}

type Role = (typeof memberRoles)[number];
const roleWords: Record<Role, RegExp> = {
  owner: /\b(owners?)\b/i,
  admin: /\b(admins?|administrators?)\b/i,
  member: /\b(members?)\b/i,
};

/**
 * Who decides: the member role the step names (owner, admin, member: the
 * roles an organization has), else anyone with access to the workspace.
 */
export function assigneeOf(text: string): { role: Role | null; note: string } {
  const role = memberRoles.find((r) => roleWords[r].test(text)) ?? null;
  if (role) return { role, note: `Assigned to the organization's ${role}s` };
  const named = /\b(manager|supervisor|approver|reviewer|lead|director|team|finance|hr|legal)\b/i.exec(text)?.[1];
  return {
    role: null,
    note: named
      ? `Assigned to anyone with access to the workspace: "${named.toLowerCase()}" is no role of the organization (${memberRoles.join(', ')}); reassign the task or set the node's assignee`
      : 'Assigned to anyone with access to the workspace',
  };
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * A person step's build: a title naming the step and its first value, the
 * instructions listing every value the step reads (so the person sees what
 * they decide on) and the decision asked, the assignee its words name.
 */
export function personBuild(step: PlanStep): StepBuild {
  const [first] = step.inputs;
  const decision = step.outputs.find((o) => o.type === 'bool')?.name ?? 'approved';
  const assignee = assigneeOf(`${step.name} ${step.description}`);
  const values = step.inputs.map((name) => `- ${name.replace(/_/g, ' ')}: {{ ${name} }}`).join('\n');
  const ask =
    decision === 'approved'
      ? 'Approve (yes) or reject (no), with a comment if you like.'
      : 'Say whether it is done (yes) or could not be done (no), with a comment if you like.';
  return {
    ...emptyBuild,
    task: {
      title: `${capitalized(step.name)}${first ? `: {{ ${first} }}` : ''}`.slice(0, 255),
      instructions: [capitalized(step.description), values, ask, assignee.note].filter(Boolean).join('\n\n'),
      role: assignee.role,
    },
  };
}
