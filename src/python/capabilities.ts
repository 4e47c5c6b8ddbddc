import type { ServerCaps } from './runner-process.js';
import type { PythonSandboxCapabilities } from './types.js';

/**
 * Full containment = bwrap started the server in new namespaces (so user
 * namespaces work for the uid we run as), Landlock is usable, the seccomp
 * filters loaded, and the server is not root. The probe is simply starting
 * the first sandboxed server: its `ready` frame reports what it found.
 */
export function assessCapabilities(bwrapError: string | null, caps: ServerCaps | null): PythonSandboxCapabilities {
  const problems: string[] = [];
  if (bwrapError) problems.push(`bwrap could not start the sandbox: ${bwrapError}`);
  const landlockAbi = caps?.landlockAbi ?? 0;
  const seccomp = caps?.seccomp ?? false;
  const nonRootUid = caps ? caps.uid !== 0 : false;
  if (caps && landlockAbi < 1)
    problems.push('Landlock is not available (needs Linux >= 5.13 with landlock in the LSM list)');
  if (caps && !seccomp)
    problems.push(`seccomp filter could not be loaded (${caps.errors.join('; ') || 'unknown reason'})`);
  if (caps && !nonRootUid) problems.push('the Python servers would run as root');
  return {
    bwrap: bwrapError === null,
    userNamespaces: bwrapError === null,
    landlockAbi,
    seccomp,
    nonRootUid,
    arch: caps?.arch ?? process.arch,
    python: caps?.python ?? 'unknown',
    fullContainment: problems.length === 0 && caps !== null,
    problems,
  };
}

export const UNSANDBOXED_ENV = 'CASEFLOW_PYTHON_ALLOW_UNSANDBOXED';

export function refusalMessage(caps: PythonSandboxCapabilities): string {
  return (
    'untrusted Python cannot run: full containment is not available on this host ' +
    `(${caps.problems.join('; ')}). Install bubblewrap and enable unprivileged user namespaces ` +
    `(see docs/python.md), or opt in to unsandboxed mode with allowUnsandboxed / ${UNSANDBOXED_ENV}=1 ` +
    'only if every piece of code is trusted.'
  );
}
