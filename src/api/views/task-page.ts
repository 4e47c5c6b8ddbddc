import type { LinkState } from '../../tasks/task-service.js';
import { variableOptions, type VariableSchemaEntry } from '../../domain/variables.js';
import type { VariableType } from '../../domain/vocabulary.js';

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/** A used, expired, withdrawn or unknown link is the browser's request at fault; the form and its outcome are not. */
const statuses: Record<LinkState['page'], number> = {
  form: 200,
  done: 200,
  invalid: 400,
  expired: 410,
  closed: 410,
  withdrawn: 410,
};

/** Where each problem's field is named: `body.outputs.<name>` as the form check reports it. */
const fieldName = (field: string) => field.replace(/^body\.outputs\./, '');

const firstType = (entry: VariableSchemaEntry): VariableType => entry.allowed_types[0]?.type ?? 'str';

/** A value as the text of its field (JSON for structured values). */
const asText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** A field's control: its options as a choice list, a bool as Yes / No, else by type; its default filled in. */
function input(entry: VariableSchemaEntry): string {
  const name = escapeHtml(entry.variable_name);
  const type = firstType(entry);
  const preset = entry.default ?? null;
  const options = variableOptions(entry);
  if (options) {
    const choice = (value: unknown) =>
      `<option value="${escapeHtml(asText(value))}"${value === preset ? ' selected' : ''}>${escapeHtml(asText(value))}</option>`;
    return `<select name="${name}" id="${name}"><option value="">—</option>${options.map(choice).join('')}</select>`;
  }
  if (type === 'bool') {
    const choice = (value: boolean, label: string) =>
      `<label><input type="radio" name="${name}" value="${String(value)}"${value === preset ? ' checked' : ''}> ${label}</label>`;
    return choice(true, 'Yes') + choice(false, 'No');
  }
  const value = preset === null ? '' : ` value="${escapeHtml(asText(preset))}"`;
  if (type === 'int' || type === 'float')
    return `<input type="number" name="${name}" id="${name}" step="${type === 'int' ? '1' : 'any'}"${value}>`;
  if (type === 'str' || type === 'date' || type === 'file')
    return `<input type="text" name="${name}" id="${name}"${type === 'date' ? ' placeholder="2026-12-31T17:00:00Z"' : ''}${value}>`;
  return `<textarea name="${name}" id="${name}" placeholder="JSON">${preset === null ? '' : escapeHtml(asText(preset))}</textarea>`;
}

function formPage(state: Extract<LinkState, { page: 'form' }>): string {
  const problems = new Map((state.problems ?? []).map((p) => [fieldName(p.field), p.message]));
  const fields = Object.values(state.task.form.schema)
    .map((entry) => {
      const problem = problems.get(entry.variable_name);
      const label = escapeHtml(entry.display_name ?? entry.variable_name);
      return `<div class="field"><label for="${escapeHtml(entry.variable_name)}">${label}</label>${
        entry.description ? `<small>${escapeHtml(entry.description)}</small>` : ''
      }${input(entry)}${problem ? `<p class="error" data-error="${escapeHtml(entry.variable_name)}">${escapeHtml(problem)}</p>` : ''}</div>`;
    })
    .join('\n');
  return `<h1>${escapeHtml(state.task.title)}</h1>
<p class="instructions">${escapeHtml(state.task.instructions)}</p>
<form method="post">
${fields}
<button type="submit">Submit</button>
</form>`;
}

function body(state: LinkState): { title: string; html: string } {
  if (state.page === 'form') return { title: state.task.title, html: formPage(state) };
  if (state.page === 'done')
    return {
      title: 'Thank you',
      html: `<h1>Thank you</h1><p>Your answer to “${escapeHtml(state.task.title)}” was recorded; the case goes on.</p>`,
    };
  if (state.page === 'expired')
    return { title: 'Link expired', html: '<h1>Link expired</h1><p>This task is past its due time.</p>' };
  if (state.page === 'withdrawn')
    return {
      title: 'Link withdrawn',
      html: '<h1>Link withdrawn</h1><p>The access this link was given out under has ended: ask for a new link.</p>',
    };
  if (state.page === 'closed')
    return {
      title: 'Already decided',
      html: `<h1>Already decided</h1><p>This task is ${state.status}: it takes no more answers.</p>`,
    };
  return { title: 'Invalid link', html: '<h1>Invalid link</h1><p>This link is not one we gave out.</p>' };
}

/** The completion page a person without a key sees (the form, built from the task's form schema, or why not). */
export function taskLinkPage(state: LinkState): { status: number; html: string } {
  const { title, html } = body(state);
  const page = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)} · caseflow</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}.field{margin:1rem 0}.field>label:first-child{display:block;font-weight:600}input[type=text],input[type=number],textarea{width:100%;padding:.4rem;box-sizing:border-box}.error{color:#b00020}.instructions{white-space:pre-wrap}</style></head>
<body data-outcome="${state.page}">${html}</body>
</html>
`;
  return { status: statuses[state.page], html: page };
}

/**
 * The form's values from its url-encoded fields, by each field's type. A field left blank is null where the
 * field may be null, else left out (the form check then says it is required, or fills its default).
 */
export function formValues(
  form: { schema: Record<string, VariableSchemaEntry> },
  sent: Record<string, unknown>,
): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const entry of Object.values(form.schema)) {
    const raw = sent[entry.variable_name];
    if (typeof raw !== 'string' || raw === '') {
      if (entry.is_nullable) values[entry.variable_name] = null;
      continue;
    }
    const type = firstType(entry);
    if (type === 'bool') values[entry.variable_name] = raw === 'true' ? true : raw === 'false' ? false : raw;
    else if (type === 'int' || type === 'float')
      values[entry.variable_name] = Number.isNaN(Number(raw)) ? raw : Number(raw);
    else if (type === 'array' || type === 'object' || type === 'array_files') {
      try {
        values[entry.variable_name] = JSON.parse(raw) as unknown;
      } catch {
        values[entry.variable_name] = raw;
      }
    } else values[entry.variable_name] = raw;
  }
  return values;
}
