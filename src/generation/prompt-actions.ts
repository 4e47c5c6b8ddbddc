import { placeholderBuild } from '../domain/generation/builds.js';
import type { Plan, PlanStep, StepBuild } from '../domain/generation/plan.js';

/**
 * What a prompt asks for, read with fixed rules and independently of any
 * planner: the actions (imperative verbs with their objects) and the
 * conditions. A run's outcome is measured against it, so a plan (offline or
 * an LLM's) that drops an asked-for action cannot end `completed`: the action
 * becomes a step needing attention (docs/generation.md, "Outcome").
 */
export interface AskedAction {
  /** The words of the prompt that ask for it. */
  text: string;
  kind: 'action' | 'condition';
  /** The action's verb, lower-cased ('' for a condition). */
  verb: string;
}

/** Verbs that ask a workflow to do something, in the imperative. */
const verbList =
  'add|alert|analy[sz]e|answer|approve|archive|ask|assign|attach|block|calculate|categori[sz]e|check|classify|clean|collect|compare|compose|compute|convert|count|create|deduplicate|dedupe|delete|deny|detect|download|draft|email|e-mail|escalate|extract|fetch|file|fill|filter|find|flag|format|forward|generate|grant|identify|label|list|look up|lower|lowercase|mark|match|merge|normali[sz]e|notify|open|parse|pay|ping|post|publish|raise|read|record|redact|reject|remind|remove|reorder|reply|request|require|respond|reverse|review|round|route|save|schedule|score|send|sign|sort|split|store|sum|summari[sz]e|tag|total|translate|trim|update|upload|uppercase|validate|verify';
// "email address" names a thing, not the verb.
const verbAtStart = new RegExp(`^(?:please\\s+)?(${verbList})(?:s|es|d|ed)?\\b(?!\\s+address)`, 'i');
const verbAnywhere = new RegExp(`\\b(${verbList})\\b`, 'i');
/** Branch outcomes that do nothing: no step is needed for them. */
const noOp = /^(keep|return|leave|ignore|skip|do nothing)\b/i;
const conditionStart = /^(?:if|when|whenever|in case|unless)\b/i;
/** Words that make an "if/when" clause a comparison rather than the trigger ("when a payment arrives"). */
const comparing =
  /\b(is|are|was|were|has|have|over|above|under|below|more|less|fewer|greater|exceeds?|equals?|contains?|includes?|within|before|after|falls?|drops?|rises?|not|missing|empty|invalid|valid|late|shipped)\b/i;
const trigger = /^(when|once|whenever)\s+.*\b(is|are|gets?)\s+\w+ed$/i;
const chatter =
  /^(what|who|why|where|which|how (are|is|do|does|did|can|much|many)|tell me|write (me )?(a|an|some) ([a-z-]+ )?(poem|story|song|joke|haiku|limerick|essay)|hi\b|hello\b|hey\b|thanks|thank you|can you (explain|tell)|explain|do you|are you)/i;

/** Sentences, then their parts at commas, "and", "then", "otherwise". */
function segmentsOf(prompt: string): string[] {
  return prompt
    .replace(/\r/g, '')
    .split(/\n+|(?<=[.;!?:])\s+/)
    .flatMap((sentence) => sentence.split(/,|;|\band\b|\bthen\b|\botherwise\b|\belse\b|\bafter that\b|\bfinally\b/i))
    .map((s) =>
      s
        .replace(/^\s*(?:\d+[.)]|[-*•])\s*/, '')
        .replace(/[.;:!?]+\s*$/, '')
        .trim(),
    )
    .filter(Boolean);
}

/** The actions and conditions a prompt asks for, in order. */
export function askedActions(prompt: string): AskedAction[] {
  const asked: AskedAction[] = [];
  for (const segment of segmentsOf(prompt)) {
    if (conditionStart.test(segment)) {
      const split = conditionOf(segment);
      if (!split) continue;
      asked.push({ text: split.condition, kind: 'condition', verb: '' });
      if (split.then) pushAction(asked, split.then);
      continue;
    }
    // "for each receipt in the report" names the items; the verbs after it are the work.
    pushAction(asked, segment.replace(/^(?:for\s+(?:each|every|all)\b[^,]*?\s+)(?=\S+)/i, ''));
  }
  return asked;
}

/**
 * "if the total is above 10000 send it for approval" → the condition and the action in the same clause;
 * undefined for a clause that names the trigger ("when a customer sends an invoice PDF", "when a new employee is hired").
 */
export function conditionOf(clause: string): { condition: string; then: string } | undefined {
  const text = clause.trim();
  if (!conditionStart.test(text) || !comparing.test(text) || trigger.test(text)) return undefined;
  const words = text.split(/\s+/);
  const compared = words.findIndex((w) => comparing.test(w));
  const at = words.findIndex((w, i) => i > compared + 1 && verbAtStart.test(w) && !/ed$/i.test(w));
  return at < 0
    ? { condition: text, then: '' }
    : { condition: words.slice(0, at).join(' '), then: words.slice(at).join(' ') };
}

function pushAction(asked: AskedAction[], text: string): void {
  const m = verbAtStart.exec(text);
  if (!m || noOp.test(text)) return;
  asked.push({ text, kind: 'action', verb: (m[1] ?? '').toLowerCase() });
}

/** Whether the prompt describes work: a workflow to build, never `irrelevant`; a question or chat is not. */
export function describesWork(prompt: string): boolean {
  const text = prompt.trim();
  if (chatter.test(text) && askedActions(text).filter((a) => a.kind === 'action').length < 2) return false;
  return (
    askedActions(text).length > 0 || (text.split(/\s+/).length >= 4 && verbAnywhere.test(text) && !chatter.test(text))
  );
}

/** Verbs that name the same kind of work, so a plan's wording may differ from the prompt's. */
const verbGroups = [
  [
    'send',
    'email',
    'e-mail',
    'notify',
    'alert',
    'forward',
    'post',
    'publish',
    'remind',
    'request',
    'ask',
    'reply',
    'respond',
  ],
  ['compute', 'calculate', 'total', 'sum', 'count', 'score', 'round'],
  ['extract', 'find', 'read', 'parse', 'fetch', 'look up', 'collect', 'identify', 'detect', 'match'],
  ['approve', 'reject', 'mark', 'flag', 'route', 'assign', 'escalate', 'grant', 'deny', 'require', 'block'],
  ['store', 'save', 'record', 'update', 'add', 'create', 'file', 'archive', 'upload', 'open', 'raise'],
  ['clean', 'trim', 'normalize', 'normalise', 'remove', 'deduplicate', 'dedupe', 'filter', 'redact', 'delete'],
  ['summarize', 'summarise', 'draft', 'compose', 'generate', 'translate', 'classify', 'categorize', 'categorise'],
];
/** Words too general to say which action a step does. */
const generic = new Set([
  'the',
  'this',
  'that',
  'them',
  'they',
  'their',
  'with',
  'from',
  'into',
  'each',
  'every',
  'item',
  'items',
  'data',
  'value',
  'values',
  'text',
  'result',
  'results',
  'list',
  'lists',
  'file',
  'files',
  'step',
  'steps',
  'workflow',
]);

function stem(word: string): string {
  return word
    .toLowerCase()
    .replace(/(ies|es|s|ed|ing|al)$/, '')
    .slice(0, 7);
}

function objectStems(action: AskedAction): string[] {
  return action.text
    .toLowerCase()
    .replace(/[^a-z0-9 ]+/g, ' ')
    .split(/\s+/)
    .slice(1)
    .filter((w) => w.length >= 4 && !generic.has(w))
    .map(stem);
}

/** Whether some step mentions the action: its verb (or one of the same kind) or a word of its object. */
function mentions(step: PlanStep, action: AskedAction): boolean {
  const text = `${step.name} ${step.description}`.toLowerCase();
  const stems = new Set(
    text
      .replace(/[^a-z0-9 ]+/g, ' ')
      .split(/\s+/)
      .filter(Boolean)
      .map(stem),
  );
  const group = verbGroups.find((g) => g.includes(action.verb)) ?? [action.verb];
  if (group.some((verb) => stems.has(stem(verb)) || text.includes(verb))) return true;
  return objectStems(action).some((s) => stems.has(s));
}

/**
 * The asked-for actions no step of the plan mentions, and the conditions
 * beyond the plan's condition steps. It cannot judge whether a step that names
 * an action does it right; building, validation and the dry run judge that.
 */
export function unplannedActions(prompt: string, plan: Plan): AskedAction[] {
  const asked = askedActions(prompt);
  const conditions = plan.steps.filter((s) => s.kind === 'condition').length;
  const missingConditions = asked.filter((a) => a.kind === 'condition').slice(conditions);
  return asked.filter(
    (a) => missingConditions.includes(a) || (a.kind === 'action' && !plan.steps.some((s) => mentions(s, a))),
  );
}

/**
 * The plan with one step per asked-for action it left out, each a placeholder
 * that names the action (so the run ends `partial` naming it), and notes for
 * the run's task results.
 */
export function withUnplannedSteps(
  prompt: string,
  plan: Plan,
): { plan: Plan; presets: Record<string, StepBuild>; notes: string[] } {
  const missing = unplannedActions(prompt, plan);
  const steps = [...plan.steps];
  const presets: Record<string, StepBuild> = {};
  const taken = new Set(steps.map((s) => s.id));
  let n = steps.length;
  for (const action of missing.slice(0, Math.max(0, 30 - steps.length))) {
    do n += 1;
    while (taken.has(`s${n}`));
    const id = `s${n}`;
    const what = action.kind === 'condition' ? 'the condition' : 'the action';
    steps.push({
      id,
      name: action.text.slice(0, 120),
      kind: 'code',
      description: `Asked for in the prompt, not in the plan: ${action.text}`.slice(0, 1000),
      inputs: [],
      outputs: [],
      branch_of: null,
      integration: null,
    });
    presets[id] = placeholderBuild(`the prompt asks for ${what} "${action.text}" and no step of the plan does it`);
  }
  const notes = missing.map(
    (a) => `The plan has no step for "${a.text}", asked for in the prompt: added as a step needing attention`,
  );
  return { plan: { ...plan, steps }, presets, notes };
}
