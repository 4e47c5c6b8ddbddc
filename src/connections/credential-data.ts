import { credentialValueMatchesType } from '../catalog/credential-fields.js';
import type { CredentialVersion } from '../domain/catalog.js';
import { DomainError } from '../errors.js';
import { oauthSettingsProblems } from './oauth-credential.js';

export type CredentialData = Record<string, unknown>;

interface Problem {
  field: string;
  message: string;
}

function refuse(problems: Problem[]): never {
  const first = problems[0];
  throw DomainError.unprocessable(
    `credentialData does not match the credential template${first ? `: ${first.field}: ${first.message}` : ''}`,
    {
      fields: problems,
    },
  );
}

/**
 * credentialData checked against the template version: no unknown field,
 * each value of its input's type (null only where the input is nullable),
 * every non-nullable input present; defaults fill what was left out. A
 * credential that authenticates needs data; OAuth needs its client pair and
 * the provider's endpoints (oauth-credential.ts).
 * Problems name fields only, never values (422 bodies are logged).
 */
export function checkCredentialData(template: CredentialVersion, data: CredentialData | undefined): CredentialData {
  if (data === undefined && template.authType !== 'no_auth') {
    refuse([
      { field: 'connection.credentialData', message: `required for a credential of authType ${template.authType}` },
    ]);
  }
  const given = data ?? {};
  const problems: Problem[] = [];
  const checked: CredentialData = {};
  for (const [name, value] of Object.entries(given)) {
    const input = Object.hasOwn(template.inputs, name) ? template.inputs[name] : undefined;
    const field = `connection.credentialData.${name}`;
    if (!input) problems.push({ field, message: 'not an input of the credential template' });
    else if (value === null ? !input.isNullable : !credentialValueMatchesType(value, input.type)) {
      problems.push({ field, message: `must be of type ${input.type}${input.isNullable ? ' or null' : ''}` });
    } else checked[name] = value;
  }
  for (const [name, input] of Object.entries(template.inputs)) {
    if (Object.hasOwn(given, name)) continue;
    if (input.default !== undefined) checked[name] = input.default;
    else if (!input.isNullable) problems.push({ field: `connection.credentialData.${name}`, message: 'is required' });
  }
  if (template.authType === 'oauth') {
    for (const { name, message } of oauthSettingsProblems(checked))
      problems.push({ field: `connection.credentialData.${name}`, message });
  }
  if (problems.length > 0) refuse(problems);
  return checked;
}
