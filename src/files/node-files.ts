import { NodeFailure } from '../domain/node-kinds/kind.js';
import type { NodeFile, NodeFiles, NodeScope } from '../domain/node-kinds/services.js';
import { FileReadRefused, type FileService } from './file-service.js';
import { OutputTypeError } from './file-types.js';

/**
 * The file port node kinds use, over the file service: a refused read or an
 * output file of a refused type fails the node, never retried (the same file
 * fails the same way on another attempt).
 */
export function nodeFiles(files: FileService): NodeFiles {
  return {
    async read(url: string, scope: NodeScope): Promise<NodeFile> {
      try {
        return await files.readForNode(url, {
          caseId: scope.caseId,
          organizationId: scope.organizationId,
          workspaceId: scope.workspaceId,
        });
      } catch (err) {
        if (err instanceof FileReadRefused)
          throw new NodeFailure(err.message, { kind: err.code === 'limit' ? 'limit' : 'input', retryable: false });
        throw err;
      }
    },
    async store(scope: NodeScope, file: NodeFile): Promise<string> {
      try {
        return await files.storeNodeOutput({
          organizationId: scope.organizationId,
          workspaceId: scope.workspaceId,
          caseId: scope.caseId,
          ...file,
        });
      } catch (err) {
        if (err instanceof OutputTypeError) throw new NodeFailure(err.message, { kind: 'output', retryable: false });
        throw err;
      }
    },
  };
}
