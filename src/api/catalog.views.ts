import type { z } from 'zod';
import type {
  ActionVersion,
  CredentialVersion,
  IntegrationCreation,
  IntegrationDetail,
  IntegrationVersion,
  Provider,
} from '../domain/catalog.js';
import type {
  actionResponse,
  credentialResponse,
  integrationCreatedResponse,
  integrationDetailResponse,
  integrationResponse,
  providerResponse,
} from './schemas/catalog.js';

/** The catalog's response bodies: what each documented schema shows of a domain entry (never organizationId or isBeta). */
export const toProvider = (p: Provider): z.infer<typeof providerResponse> => ({
  id: p.id,
  name: p.name,
  createdAt: p.createdAt,
});

function integrationFields(v: IntegrationVersion) {
  return {
    id: v.id,
    versionId: v.versionId,
    name: v.name,
    description: v.description,
    icon: v.icon,
    category: v.category,
    requiredPlan: v.requiredPlan,
    status: v.status,
    providerId: v.providerId,
    isNew: v.isNew,
    isPopular: v.isPopular,
  };
}

export const toCreated = (c: IntegrationCreation): z.infer<typeof integrationCreatedResponse> => ({
  ...integrationFields(c.integration),
  createdActions: c.createdActions,
  createdCredential: c.createdCredential,
});

export const toIntegration = (v: IntegrationVersion): z.infer<typeof integrationResponse> => ({
  ...integrationFields(v),
  versionNumber: v.versionNumber,
  createdAt: v.createdAt,
  versionCreatedAt: v.versionCreatedAt,
  published: v.organizationId === null,
});

export const toAction = (a: ActionVersion): z.infer<typeof actionResponse> => ({
  id: a.id,
  versionId: a.versionId,
  integrationId: a.integrationId,
  name: a.name,
  endpoint: a.endpoint,
  description: a.description,
  inputs: a.inputs,
  outputs: a.outputs,
  code: a.code,
  versionNumber: a.versionNumber,
  createdAt: a.createdAt,
  versionCreatedAt: a.versionCreatedAt,
});

export const toCredential = (c: CredentialVersion): z.infer<typeof credentialResponse> => ({
  id: c.id,
  versionId: c.versionId,
  integrationId: c.integrationId,
  name: c.name,
  description: c.description,
  inputs: c.inputs,
  status: c.status,
  icon: c.icon,
  authType: c.authType,
  versionNumber: c.versionNumber,
  createdAt: c.createdAt,
  versionCreatedAt: c.versionCreatedAt,
});

export const toDetail = (d: IntegrationDetail): z.infer<typeof integrationDetailResponse> => ({
  ...toIntegration(d.integration),
  actions: d.actions.map(toAction),
  credentials: d.credentials.map(toCredential),
});
