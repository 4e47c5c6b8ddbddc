import type { CredentialFieldType } from '../domain/catalog.js';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether a JSON value can stand for a credential input of this type: used for
 * a template's `default` here and for a connection's `credentialData` later.
 * A set travels as a JSON array of distinct values; a file as its URL or id.
 */
export function credentialValueMatchesType(value: unknown, type: CredentialFieldType): boolean {
  switch (type) {
    case 'str':
    case 'file':
      return typeof value === 'string';
    case 'int':
      return typeof value === 'number' && Number.isInteger(value);
    case 'float':
      return typeof value === 'number' && Number.isFinite(value);
    case 'bool':
      return typeof value === 'boolean';
    case 'date':
      return typeof value === 'string' && !Number.isNaN(Date.parse(value));
    case 'list':
    case 'array':
      return Array.isArray(value);
    case 'set':
      return Array.isArray(value) && new Set(value.map((item) => JSON.stringify(item))).size === value.length;
    case 'dict':
    case 'object':
      return isPlainObject(value);
    case 'array_files':
      return Array.isArray(value) && value.every((item) => typeof item === 'string');
  }
}
