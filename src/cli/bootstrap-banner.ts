import type { BootstrapResult } from '../tenancy/tenancy-service.js';

/**
 * Prints the first key straight to stdout, never through the logger: it must
 * not land in log storage, and it is shown this once only.
 */
export function printBootstrapKey(result: BootstrapResult): void {
  process.stdout.write(
    [
      '',
      '================================================================',
      ' caseflow: first start on an empty data directory.',
      ` Created organization "${result.organization.name}" (${result.organization.id}, verified)`,
      ` and workspace "${result.workspace.name}" (${result.workspace.id}).`,
      ' Full-access API key (shown once, store it now):',
      '',
      `   CASEFLOW_API_KEY=${result.key.key}`,
      '',
      ' Send it as the x-service-key header, or keep it for the caseflow CLI',
      ' (a config file readable by you only) and run a first case as in',
      ' README.md, "Quickstart":',
      '',
      `   npm run -s caseflow -- login --key ${result.key.key}`,
      '================================================================',
      '',
    ].join('\n'),
  );
}
