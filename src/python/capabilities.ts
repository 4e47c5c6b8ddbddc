import type { ServerCaps } from './runner-process.js';
import type { PythonSandboxCapabilities } from './types.js';

/**
 * Full containment = bwrap started the server in new namespaces (so user
 * namespaces work for the uid we run as), Landlock is usable, the seccomp
 * filters loaded, the host lets the server set a call's limits (prlimit), and
 * the server is not root. The probe is simply starting the first sandboxed
 * server: its `ready` frame reports what it found.
 */
export function assessCapabilities(bwrapError: string | null, caps: ServerCaps | null): PythonSandboxCapabilities {
  const problems: string[] = [];
  if (bwrapError) problems.push(`bwrap could not start the sandbox: ${bwrapError}`);
  const landlockAbi = caps?.landlockAbi ?? 0;
  const seccomp = caps?.seccomp ?? false;
  const nonRootUid = caps ? caps.uid !== 0 : false;
  const callLimits = caps?.callLimits ?? false;
  if (caps && landlockAbi < 1)
    problems.push('Landlock is not available (needs Linux >= 5.13 with landlock in the LSM list)');
  if (caps && !seccomp)
    problems.push(`seccomp filter could not be loaded (${caps.errors.join('; ') || 'unknown reason'})`);
  if (caps && !nonRootUid) problems.push('the Python servers would run as root');
  if (caps && !callLimits)
    problems.push(
      `the host refuses prlimit: no call's memory and CPU limits can be set, so no call can run (${
        caps.errors.filter((e) => e.startsWith('prlimit')).join('; ') || 'unknown reason'
      })`,
    );
  return {
    bwrap: bwrapError === null,
    userNamespaces: bwrapError === null,
    landlockAbi,
    seccomp,
    callLimits,
    nonRootUid,
    arch: caps?.arch ?? process.arch,
    python: caps?.python ?? 'unknown',
    fullContainment: problems.length === 0 && caps !== null,
    problems,
  };
}

export const UNSANDBOXED_ENV = 'CASEFLOW_PYTHON_ALLOW_UNSANDBOXED';

/** A sandboxed server started and the host refused it prlimit (unknown when no server could start). */
export function limitsRefused(caps: PythonSandboxCapabilities): boolean {
  return caps.bwrap && !caps.callLimits;
}

export function refusalMessage(caps: PythonSandboxCapabilities): string {
  const why =
    'untrusted Python cannot run: full containment is not available on this host ' + `(${caps.problems.join('; ')}). `;
  if (limitsRefused(caps))
    return (
      why +
      "Allow the Python servers prlimit (prlimit64) on their own children in the host's security policy " +
      '(a container seccomp profile, SELinux, AppArmor; see docs/python.md): no mode runs a call without its limits.'
    );
  return (
    why +
    'Install bubblewrap and enable unprivileged user namespaces ' +
    `(see docs/python.md), or opt in to unsandboxed mode with allowUnsandboxed / ${UNSANDBOXED_ENV}=1 ` +
    'only if every piece of code is trusted.'
  );
}
