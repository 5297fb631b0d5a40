import {
  AddTenantMemberRequest,
  ErrorBodyDto,
  PageQuery,
  TenantInvitation,
  TenantMember,
  TenantMemberList,
  UpdateTenantMemberRequest,
} from '@hwp/contracts';
import { forbidden, notFound, type TenantRouting } from './tenant-routing';

const noOwnerLeft = { description: 'It would leave the tenant without an owner', schema: ErrorBodyDto };

export const listMembers = ({ signedInRoute, tenants }: TenantRouting) =>
  signedInRoute({
    method: 'get',
    path: '/tenant/:tenant_id/members',
    summary: 'Members of a tenant with their roles',
    tags: ['tenants'],
    query: PageQuery,
    responses: {
      200: { description: 'Page of members', schema: TenantMemberList },
      403: forbidden,
      404: notFound,
    },
    handler: ({ query, params, user }) => tenants.members(user.id, params.tenant_id, query),
  });

export const addMember = ({ signedInRoute, invitations }: TenantRouting) =>
  signedInRoute({
    method: 'post',
    path: '/tenant/:tenant_id/members',
    summary: 'Invite an email address to the tenant (admin+; owner to invite owners)',
    description:
      'Nobody becomes a member without consent: this emails an invitation (valid `TENANT_INVITATION_TTL_HOURS`) ' +
      'that the addressee accepts or declines, signed in with that address confirmed ' +
      '(`POST /tenant-invitations/accept`). The answer is the same whether or not an account uses the address; ' +
      'inviting the same address again replaces the pending invitation.',
    tags: ['tenants'],
    body: AddTenantMemberRequest,
    status: 202,
    responses: {
      202: { description: 'Invitation sent', schema: TenantInvitation },
      403: forbidden,
      404: notFound,
      409: { description: 'The address is already a member', schema: ErrorBodyDto },
    },
    handler: ({ body, params, user }) => invitations.invite(user.id, params.tenant_id, body),
  });

export const updateMember = ({ signedInRoute, tenants }: TenantRouting) =>
  signedInRoute({
    method: 'patch',
    path: '/tenant/:tenant_id/members/:user_id',
    summary: "Change a member's role (admin+; owner to grant or take owner)",
    tags: ['tenants'],
    body: UpdateTenantMemberRequest,
    responses: {
      200: { description: 'Updated', schema: TenantMember },
      403: forbidden,
      404: notFound,
      409: noOwnerLeft,
    },
    handler: ({ body, params, user }) =>
      tenants.updateMember(user.id, params.tenant_id, params.user_id, body.role),
  });

export const removeMember = ({ signedInRoute, tenants }: TenantRouting) =>
  signedInRoute({
    method: 'delete',
    path: '/tenant/:tenant_id/members/:user_id',
    summary: 'Remove a member (admin+), or leave (yourself)',
    tags: ['tenants'],
    responses: {
      204: { description: 'Removed' },
      403: forbidden,
      404: notFound,
      409: noOwnerLeft,
    },
    handler: async ({ params, res, user }) => {
      await tenants.removeMember(user.id, params.tenant_id, params.user_id);
      res.status(204).end();
    },
  });
