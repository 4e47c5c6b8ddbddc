import type { z } from 'zod';
import type { CodeNodeVersion } from '../../domain/code-node-records.js';
import type { codeNodeResponse } from '../schemas/code-nodes.js';

export function codeNodeView(version: CodeNodeVersion): z.infer<typeof codeNodeResponse> {
  return {
    id: version.id,
    versionId: version.versionId,
    versionNumber: version.versionNumber,
    name: version.name,
    description: version.description,
    icon: version.icon,
    sourceCode: version.sourceCode,
    categories: version.categories,
    inputs: version.inputs,
    outputs: version.outputs,
    tags: version.tags,
    options: version.options,
    nonEditableFields: version.nonEditableFields,
    createdAt: version.createdAt,
    versionCreatedAt: version.versionCreatedAt,
  };
}
