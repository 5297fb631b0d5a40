import {
  CreateTenantRequest,
  ErrorBodyDto,
  PageQuery,
  Tenant,
  TenantList,
  UpdateTenantRequest,
} from '@hwp/contracts';
import { requestTenant } from '../../tenancy/tenant-context';
import { forbidden, notFound, type TenantRouting } from './tenant-routing';

export const createTenant = ({ signedInRoute, tenants }: TenantRouting) =>
  signedInRoute({
    method: 'post',
    path: '/tenant/create',
    summary: 'Create a tenant (organization); the caller becomes its owner',
    tags: ['tenants'],
    body: CreateTenantRequest,
    status: 201,
    responses: {
      201: { description: 'Created', schema: Tenant },
      403: forbidden,
      409: { description: 'The slug is taken', schema: ErrorBodyDto },
    },
    handler: ({ body, user }) => tenants.create(user.id, body),
  });

export const listTenants = ({ signedInRoute, tenants }: TenantRouting) =>
  signedInRoute({
    method: 'get',
    path: '/tenants',
    summary: 'Tenants the caller belongs to, with their role, in the order they joined',
    tags: ['tenants'],
    query: PageQuery,
    responses: { 200: { description: 'Page of tenants', schema: TenantList }, 403: forbidden },
    handler: ({ query, user }) => tenants.listForUser(user.id, query),
  });

export const currentTenant = ({ signedInRoute, tenants }: TenantRouting) =>
  signedInRoute({
    method: 'get',
    path: '/tenant/current',
    summary: 'The tenant this request resolves to (X-Tenant-ID, else default, else first)',
    tags: ['tenants'],
    responses: { 200: { description: 'The resolved tenant', schema: Tenant }, 403: forbidden },
    handler: ({ req, user }) => tenants.get(user.id, requestTenant(req).id),
  });

export const getTenant = ({ signedInRoute, tenants }: TenantRouting) =>
  signedInRoute({
    method: 'get',
    path: '/tenant/:tenant_id',
    summary: 'Tenant details',
    tags: ['tenants'],
    responses: { 200: { description: 'The tenant', schema: Tenant }, 403: forbidden, 404: notFound },
    handler: ({ params, user }) => tenants.get(user.id, params.tenant_id),
  });

export const updateTenant = ({ signedInRoute, tenants }: TenantRouting) =>
  signedInRoute({
    method: 'put',
    path: '/tenant/:tenant_id',
    summary: 'Update name, slug or settings (admin+)',
    tags: ['tenants'],
    body: UpdateTenantRequest,
    responses: {
      200: { description: 'The updated tenant', schema: Tenant },
      403: forbidden,
      404: notFound,
      409: { description: 'The slug is taken', schema: ErrorBodyDto },
    },
    handler: ({ body, params, user }) => tenants.update(user.id, params.tenant_id, body),
  });
