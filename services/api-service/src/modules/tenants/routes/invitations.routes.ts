import {
  ErrorBodyDto,
  PageQuery,
  Tenant,
  TenantInvitation,
  TenantInvitationList,
  TenantInvitationTokenRequest,
} from '@hwp/contracts';
import { forbidden, notFound, type TenantRouting } from './tenant-routing';

const noInvitation = {
  description: 'No pending, unexpired invitation to the caller’s confirmed email has that token or id',
  schema: ErrorBodyDto,
};

export const listInvitations = ({ signedInRoute, invitations }: TenantRouting) =>
  signedInRoute({
    method: 'get',
    path: '/tenant/:tenant_id/invitations',
    summary: 'Invitations of a tenant, newest first (admin+)',
    tags: ['tenants'],
    query: PageQuery,
    responses: {
      200: { description: 'Page of invitations', schema: TenantInvitationList },
      403: forbidden,
      404: notFound,
    },
    handler: ({ query, params, user }) => invitations.listForTenant(user.id, params.tenant_id, query),
  });

export const revokeInvitation = ({ signedInRoute, invitations }: TenantRouting) =>
  signedInRoute({
    method: 'delete',
    path: '/tenant/:tenant_id/invitations/:invitation_id',
    summary: 'Withdraw a pending invitation (admin+); its token stops working',
    tags: ['tenants'],
    responses: {
      204: { description: 'Withdrawn' },
      403: forbidden,
      404: { description: 'No such tenant or invitation', schema: ErrorBodyDto },
      409: { description: 'The invitation is no longer pending', schema: ErrorBodyDto },
    },
    handler: async ({ params, res, user }) => {
      await invitations.revoke(user.id, params.tenant_id, params.invitation_id);
      res.status(204).end();
    },
  });

export const myInvitations = ({ signedInRoute, invitations }: TenantRouting) =>
  signedInRoute({
    method: 'get',
    path: '/tenant-invitations',
    summary: 'Pending invitations to the caller’s confirmed email address, newest first',
    tags: ['tenants'],
    query: PageQuery,
    responses: { 200: { description: 'Page of invitations', schema: TenantInvitationList } },
    handler: ({ query, user }) => invitations.listMine(user.id, query),
  });

export const acceptInvitation = ({ signedInRoute, invitations }: TenantRouting) =>
  signedInRoute({
    method: 'post',
    path: '/tenant-invitations/accept',
    summary: 'Accept an invitation by the token of its email: the caller joins the tenant',
    description: 'The caller must be signed in with the invited address, confirmed.',
    tags: ['tenants'],
    body: TenantInvitationTokenRequest,
    responses: { 200: { description: 'The joined tenant', schema: Tenant }, 404: noInvitation },
    handler: ({ body, user }) => invitations.accept(user.id, { token: body.token }),
  });

export const declineInvitation = ({ signedInRoute, invitations }: TenantRouting) =>
  signedInRoute({
    method: 'post',
    path: '/tenant-invitations/decline',
    summary: 'Decline an invitation by the token of its email',
    tags: ['tenants'],
    body: TenantInvitationTokenRequest,
    responses: { 200: { description: 'Declined', schema: TenantInvitation }, 404: noInvitation },
    handler: ({ body, user }) => invitations.decline(user.id, { token: body.token }),
  });

export const acceptInvitationById = ({ signedInRoute, invitations }: TenantRouting) =>
  signedInRoute({
    method: 'post',
    path: '/tenant-invitations/:invitation_id/accept',
    summary: 'Accept one of the caller’s invitations (from GET /tenant-invitations)',
    tags: ['tenants'],
    responses: { 200: { description: 'The joined tenant', schema: Tenant }, 404: noInvitation },
    handler: ({ params, user }) => invitations.accept(user.id, { id: params.invitation_id }),
  });

export const declineInvitationById = ({ signedInRoute, invitations }: TenantRouting) =>
  signedInRoute({
    method: 'post',
    path: '/tenant-invitations/:invitation_id/decline',
    summary: 'Decline one of the caller’s invitations',
    tags: ['tenants'],
    responses: { 200: { description: 'Declined', schema: TenantInvitation }, 404: noInvitation },
    handler: ({ params, user }) => invitations.decline(user.id, { id: params.invitation_id }),
  });
