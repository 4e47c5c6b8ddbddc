import { parse, stringify } from 'yaml';
import { WorkflowFileError } from './errors.js';
import { workflowFileSchema, type WorkflowFile } from './format.js';

/** A workflow file's text (YAML, of which JSON is a part) as a checked WorkflowFile. */
export function parseWorkflowFile(text: string): WorkflowFile {
  let value: unknown;
  try {
    value = parse(text, { prettyErrors: true, uniqueKeys: true });
  } catch (err) {
    throw new WorkflowFileError([err instanceof Error ? err.message : String(err)]);
  }
  const result = workflowFileSchema.safeParse(value);
  if (!result.success)
    throw new WorkflowFileError(result.error.issues.map((i) => `${i.path.join('.') || 'file'}: ${i.message}`));
  return result.data;
}

/** YAML, with multi-line text (Python source) as literal blocks. */
export function formatWorkflowFile(file: WorkflowFile, format: 'yaml' | 'json' = 'yaml'): string {
  return format === 'json' ? `${JSON.stringify(file, null, 2)}\n` : stringify(file, { lineWidth: 0 });
}
