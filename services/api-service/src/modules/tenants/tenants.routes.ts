import {
  AddTenantMemberRequest,
  CreateTenantRequest,
  ErrorBodyDto,
  PageQuery,
  Profile,
  Tenant,
  TenantList,
  TenantMember,
  TenantMemberList,
  UpdateProfileRequest,
  UpdateTenantMemberRequest,
  UpdateTenantRequest,
} from '@hwp/contracts';
import { type ApiRouter, UnauthorizedError } from '@hwp/platform';
import type { Request, RequestHandler } from 'express';
import type { ProfileService } from './profile.service';
import { requestTenant } from './tenant-context';
import type { TenantsService } from './tenants.service';

export interface TenantRouteDeps {
  tenants: TenantsService;
  profiles: ProfileService;
  /** authenticate, the standard rate limit, then tenant resolution. */
  signedIn: RequestHandler[];
}

const SECURITY = ['bearerAuth'];
const notFound = { description: 'No such tenant among the caller’s', schema: ErrorBodyDto };
const forbidden = {
  description: 'The caller’s role is too low, or X-Tenant-ID names a tenant they are not in',
  schema: ErrorBodyDto,
};

function userId(req: Request): string {
  if (!req.user) throw new UnauthorizedError();
  return req.user.id;
}

/** Tenants, memberships and the profile (section 4.4, DECISIONS.md section 2). */
export function mountTenantRoutes(api: ApiRouter, deps: TenantRouteDeps): void {
  const { tenants, profiles, signedIn } = deps;
  const common = { security: SECURITY, before: signedIn, rateLimited: true } as const;

  api.route({
    method: 'post',
    path: '/tenant/create',
    summary: 'Create a tenant (organization); the caller becomes its owner',
    tags: ['tenants'],
    body: CreateTenantRequest,
    ...common,
    responses: {
      201: { description: 'Created', schema: Tenant },
      403: forbidden,
      409: { description: 'The slug is taken', schema: ErrorBodyDto },
    },
    handler: async (req, res) => {
      res.status(201).json(await tenants.create(userId(req), req.body as CreateTenantRequest));
    },
  });

  api.route({
    method: 'get',
    path: '/tenants',
    summary: 'Tenants the caller belongs to, with their role, in the order they joined',
    tags: ['tenants'],
    query: PageQuery,
    ...common,
    responses: { 200: { description: 'Page of tenants', schema: TenantList }, 403: forbidden },
    handler: async (req, res) => {
      res.json(await tenants.listForUser(userId(req), res.locals.query as PageQuery));
    },
  });

  api.route({
    method: 'get',
    path: '/tenant/current',
    summary: 'The tenant this request resolves to (X-Tenant-ID, else default, else first)',
    tags: ['tenants'],
    ...common,
    responses: { 200: { description: 'The resolved tenant', schema: Tenant }, 403: forbidden },
    handler: async (req, res) => {
      res.json(await tenants.get(userId(req), requestTenant(req).id));
    },
  });

  api.route({
    method: 'get',
    path: '/tenant/:tenant_id',
    summary: 'Tenant details',
    tags: ['tenants'],
    ...common,
    responses: { 200: { description: 'The tenant', schema: Tenant }, 403: forbidden, 404: notFound },
    handler: async (req, res) => {
      res.json(await tenants.get(userId(req), String(req.params.tenant_id)));
    },
  });

  api.route({
    method: 'put',
    path: '/tenant/:tenant_id',
    summary: 'Update name, slug or settings (admin+)',
    tags: ['tenants'],
    body: UpdateTenantRequest,
    ...common,
    responses: {
      200: { description: 'The updated tenant', schema: Tenant },
      403: forbidden,
      404: notFound,
      409: { description: 'The slug is taken', schema: ErrorBodyDto },
    },
    handler: async (req, res) => {
      res.json(
        await tenants.update(userId(req), String(req.params.tenant_id), req.body as UpdateTenantRequest),
      );
    },
  });

  api.route({
    method: 'get',
    path: '/tenant/:tenant_id/members',
    summary: 'Members of a tenant with their roles',
    tags: ['tenants'],
    query: PageQuery,
    ...common,
    responses: {
      200: { description: 'Page of members', schema: TenantMemberList },
      403: forbidden,
      404: notFound,
    },
    handler: async (req, res) => {
      res.json(
        await tenants.members(userId(req), String(req.params.tenant_id), res.locals.query as PageQuery),
      );
    },
  });

  api.route({
    method: 'post',
    path: '/tenant/:tenant_id/members',
    summary: 'Add an existing account to the tenant (admin+; owner to add owners)',
    tags: ['tenants'],
    body: AddTenantMemberRequest,
    ...common,
    responses: {
      201: { description: 'Added', schema: TenantMember },
      403: forbidden,
      404: { description: 'No such tenant, or no account with that email', schema: ErrorBodyDto },
      409: { description: 'Already a member', schema: ErrorBodyDto },
    },
    handler: async (req, res) => {
      const body = req.body as AddTenantMemberRequest;
      res.status(201).json(await tenants.addMember(userId(req), String(req.params.tenant_id), body));
    },
  });

  api.route({
    method: 'patch',
    path: '/tenant/:tenant_id/members/:user_id',
    summary: "Change a member's role (admin+; owner to grant or take owner)",
    tags: ['tenants'],
    body: UpdateTenantMemberRequest,
    ...common,
    responses: {
      200: { description: 'Updated', schema: TenantMember },
      403: forbidden,
      404: notFound,
      409: { description: 'It would leave the tenant without an owner', schema: ErrorBodyDto },
    },
    handler: async (req, res) => {
      const { role } = req.body as UpdateTenantMemberRequest;
      res.json(
        await tenants.updateMember(
          userId(req),
          String(req.params.tenant_id),
          String(req.params.user_id),
          role,
        ),
      );
    },
  });

  api.route({
    method: 'delete',
    path: '/tenant/:tenant_id/members/:user_id',
    summary: 'Remove a member (admin+), or leave (yourself)',
    tags: ['tenants'],
    ...common,
    responses: {
      204: { description: 'Removed' },
      403: forbidden,
      404: notFound,
      409: { description: 'It would leave the tenant without an owner', schema: ErrorBodyDto },
    },
    handler: async (req, res) => {
      await tenants.removeMember(userId(req), String(req.params.tenant_id), String(req.params.user_id));
      res.status(204).end();
    },
  });

  api.route({
    method: 'get',
    path: '/profile',
    summary: 'Profile of the caller with their tenants',
    tags: ['profile'],
    ...common,
    responses: { 200: { description: 'The profile', schema: Profile }, 403: forbidden },
    handler: async (req, res) => {
      res.json(await profiles.get(userId(req)));
    },
  });

  api.route({
    method: 'put',
    path: '/profile',
    summary: 'Update names, avatar or default tenant (null clears)',
    tags: ['profile'],
    body: UpdateProfileRequest,
    ...common,
    responses: {
      200: { description: 'The updated profile', schema: Profile },
      403: forbidden,
    },
    handler: async (req, res) => {
      res.json(await profiles.update(userId(req), req.body as UpdateProfileRequest));
    },
  });
}
