import type { PlanInput, PlanStep, PlanVariableType } from '../domain/generation/plan.js';

/**
 * The offline planner's reading of the nouns that name a workflow's inputs:
 * documents, spreadsheets, images (and their plurals) are files of the types
 * they name; amounts, totals, prices, ratios are numbers; dates are dates;
 * lists are arrays. Also the step that reads a file input's text in the
 * sandbox, for the types the Python allowlist can parse (config/python-policy.json:
 * csv and json, plain text); other types get a step needing attention.
 */

/** File words → the types they accept (upper-case extensions, as allowed_file_types tags name them). */
const fileWords: Array<{ match: RegExp; types: string[]; format: boolean }> = [
  { match: /^pdfs?$/, types: ['PDF'], format: true },
  { match: /^csvs?$/, types: ['CSV'], format: true },
  { match: /^(excel|xlsx|spreadsheets?)$/, types: ['XLSX', 'XLS', 'CSV'], format: true },
  { match: /^json$/, types: ['JSON'], format: true },
  { match: /^(text|txt)$/, types: ['TXT'], format: true },
  { match: /^(images?|photos?|pictures?)$/, types: ['PNG', 'JPEG'], format: false },
  { match: /^(scans?|receipts?)$/, types: ['PDF', 'PNG', 'JPEG'], format: false },
  { match: /^documents?$/, types: ['PDF', 'DOCX', 'TXT'], format: false },
  { match: /^(resumes?|cvs?)$/, types: ['PDF', 'DOCX'], format: false },
];
const filler = new Set([
  'a',
  'an',
  'the',
  'each',
  'every',
  'all',
  'uploaded',
  'incoming',
  'some',
  'of',
  'folder',
  'file',
  'files',
]);

export interface FileInput {
  name: string;
  type: 'file' | 'array_files';
  types: string[];
}

function identifier(words: string[]): string {
  const name = words
    .join('_')
    .replace(/[^a-z0-9_]+/g, '')
    .replace(/^[0-9_]+/, '');
  return name.slice(0, 40);
}

/**
 * File inputs named in the prompt: "an invoice PDF", "a CSV of leads", "an uploaded Excel timesheet",
 * "receipts", "a JSON file of orders", "every uploaded document" (plurals and each/every: array_files).
 */
export function fileInputsOf(prompt: string): FileInput[] {
  const found: FileInput[] = [];
  const words = prompt
    .toLowerCase()
    .replace(/'s\b/g, '')
    .replace(/[^a-z0-9 ]+/g, ' ')
    .split(/\s+/);
  for (const [i, word] of words.entries()) {
    const kind = fileWords.find((f) => f.match.test(word));
    // "CV text", "text of the post", "json" without "file": words, not files.
    if (!kind || (word === 'text' || word === 'json' ? words[i + 1] !== 'file' : words[i + 1] === 'text')) continue;
    const many =
      /s$/.test(word) || ['each', 'every', 'all'].some((w) => words.slice(Math.max(0, i - 3), i).includes(w));
    let name: string[] = [];
    const after = words[i + 1] === 'file' || words[i + 1] === 'files' ? i + 2 : i + 1;
    if (words[after] === 'of') {
      // "a CSV of leads", "a JSON file of rental payments", "a folder of PDF resumes": the thing it holds.
      const rest = words.slice(after + 1).filter((w, k, all) => k < all.length && !filler.has(w));
      // "rental payments": a qualifier and the plural it qualifies; else the one word.
      name = rest[1] && !/s$/.test(rest[0] ?? '') && /s$/.test(rest[1]) ? rest.slice(0, 2) : rest.slice(0, 1);
    }
    if (name.length === 0 && kind.format) {
      // "an invoice PDF", "a bank statement CSV", "an Excel timesheet": the noun beside the format.
      const before = words[i - 1];
      const next = words[after];
      name = before && !filler.has(before) ? [before] : next && !filler.has(next) ? [next] : [word];
    }
    if (name.length === 0) name = [word];
    const input = identifier(name);
    if (input && !found.some((f) => f.name === input))
      found.push({ name: input, type: many ? 'array_files' : 'file', types: kind.types });
  }
  return found.filter((f, i) => !found.some((g, j) => j !== i && g.name === `${f.name}s`));
}

/** The type a noun names: amounts, totals, prices, ratios → float; dates → date; lists → array; else text. */
export function typeOfNoun(name: string): PlanVariableType {
  if (/(^|_)(list|lists)(_|$)|s_list$/.test(name)) return 'array';
  if (/(^|_)(date|deadline|due)(_|$)/.test(name)) return 'date';
  if (
    /(^|_)(amount|total|totals|price|prices|cost|fee|income|debt|salary|rate|ratio|percent|percentage|weight|temperature|balance|budget|rating)(_|$)/.test(
      name,
    )
  )
    return 'float';
  return 'str';
}

/** A dry-run sample for a typed input (JSON text). */
export function sampleForType(type: PlanVariableType, name: string): string {
  const samples: Partial<Record<PlanVariableType, unknown>> = {
    float: 1250.5,
    date: '2024-01-31',
    array: [`first ${name.replace(/_/g, ' ')}`, `second ${name.replace(/_/g, ' ')}`],
  };
  return JSON.stringify(samples[type] ?? `sample ${name.replace(/_/g, ' ')} 42 info@example.com`);
}

/** The text of a sample file of the input's first type, for the dry run. */
function sampleFileText(types: string[], name: string): string {
  if (types[0] === 'CSV')
    return `name,email,amount\nAda,ada@example.com,120.50\nAda,ada@example.com,120.50\nBob,bob@example.com,80\n`;
  if (types[0] === 'JSON')
    return JSON.stringify([
      { id: 1, total: 120.5 },
      { id: 2, total: 80 },
    ]);
  return `Sample ${name.replace(/_/g, ' ')}: total 1250.50, due 2024-01-31, contact info@example.com`;
}

export function fileInput(file: FileInput): PlanInput {
  const text = sampleFileText(file.types, file.name);
  return {
    name: file.name,
    type: file.type,
    description: `A file named in the prompt (${file.types.join(', ')}): ${file.name.replace(/_/g, ' ')}`,
    sample: JSON.stringify(file.type === 'file' ? text : [text]),
    allowed_file_types: file.types,
  };
}

/** What the sandbox can parse: text, CSV (csv), JSON (json); PDF, Office and images need a package it does not allow. */
const readable: Record<string, { output: PlanVariableType; parse: string }> = {
  TXT: { output: 'str', parse: 'data.decode("utf-8", "replace")' },
  CSV: { output: 'array', parse: 'list(csv.DictReader(io.StringIO(data.decode("utf-8", "replace"))))' },
  JSON: { output: 'array', parse: '(lambda v: v if isinstance(v, list) else [v])(json.loads(data))' },
};

const readStepPattern = /^Read (the file|each file of) input "([a-z][a-z0-9_]*)" \(([A-Z, ]+)\)/;

/** The step that reads a file input's content for the steps after it. */
export function readStepFor(input: PlanInput): Pick<PlanStep, 'name' | 'kind' | 'description' | 'inputs' | 'outputs'> {
  const types = input.allowed_file_types ?? [];
  const parser = types.length === 1 ? readable[types[0] ?? ''] : undefined;
  const output = parser?.output ?? 'str';
  return {
    name: `read ${input.name.replace(/_/g, ' ')}`,
    kind: 'code',
    description: `Read ${input.type === 'array_files' ? 'each file of' : 'the file'} input "${input.name}" (${types.join(', ')})`,
    inputs: [input.name],
    outputs: [{ name: `${input.name}_content`, type: input.type === 'array_files' ? 'array' : output }],
  };
}

/** Python for a read step, or why the sandbox cannot read that type; undefined when the step is no read step. */
export function readStepSource(step: PlanStep): { source: string } | { unresolved: string } | undefined {
  const m = readStepPattern.exec(step.description);
  if (!m) return undefined;
  const [, which = '', input = '', typeList = ''] = m;
  const types = typeList.split(/,\s*/);
  const parser = types.length === 1 ? readable[types[0] ?? ''] : undefined;
  const output = step.outputs[0]?.name;
  if (!parser || !output)
    return {
      unresolved: `no package on the Python allowlist (config/python-policy.json) reads ${types.join(' / ')} files in the sandbox; configure an LLM or add a parser and write this step`,
    };
  const many = which === 'each file of';
  const read = `def read(url):\n    data = caseflow.read_file(url)\n    return ${parser.parse}\n`;
  const value = `inputs.get(${JSON.stringify(input)})`;
  const result = many ? `[read(url) for url in ${value} or []]` : `read(${value})`;
  return {
    source: `import csv\nimport io\nimport json\n\n\n${read}\n\ndef main(inputs):\n    return {${JSON.stringify(output)}: ${result}}\n`,
  };
}
