import {
  AcceptedInvitation,
  ErrorBodyDto,
  InvitationCodeRequest,
  InvitationList,
  InvitationValidation,
  ListInvitationsQuery,
  SendInvitationRequest,
  SentInvitation,
} from '@hwp/contracts';
import type { RequestHandler } from 'express';
import { atLeast, fromBody } from '../workspace-access/workspace-access';
import { memberRoute, openRoute, userRoute } from '../workspace-access/workspace-route';
import type { InvitationScope, InvitationsService } from './invitations.service';

const TAGS = ['invitations'];

/** Invitations (section 4.11, limits in section 8). */
export const sendInvitation = (invitations: InvitationsService, sendLimit: RequestHandler) =>
  memberRoute({
    method: 'post',
    path: '/api/invitations/send',
    summary: 'Invite someone to a workspace by email',
    description:
      'Needs manager+ in `workspace`; only an owner may invite with role `owner` (else 403). `role` defaults to `engineer`. ' +
      'The email (template `invitation`) carries a single-use code and the link `<SITE_URL>/invite?code=<code>`; the code ' +
      'expires after INVITATION_TTL_DAYS (7) days. Sending again to the same address replaces the pending invitation ' +
      '(the older code answers 410). Limited to INVITATIONS_PER_MINUTE_PER_IP (5) sends per minute per client address, ' +
      'counted before the role check. The email names the signed-in sender (display name, else username, with ' +
      "their address) and the answer's `invitedBy` is that name; an `invitedBy` in the body is ignored (deprecated).",
    tags: TAGS,
    role: 'manager',
    workspace: fromBody('workspace'),
    before: [sendLimit],
    rateLimited: true,
    body: SendInvitationRequest,
    responses: {
      201: { description: 'Sent; the answer carries the code', schema: SentInvitation },
      403: {
        description: 'Below manager in the workspace, or a non-owner inviting an owner',
        schema: ErrorBodyDto,
      },
      409: { description: 'The address belongs to a member of the workspace', schema: ErrorBodyDto },
    },
    status: 201,
    handler: ({ body, user, workspace }) => invitations.send(user, workspace, body),
  });

export const listInvitations = (invitations: InvitationsService) =>
  userRoute({
    method: 'get',
    path: '/api/invitations',
    summary: 'Invitations sent to the caller’s email or by the caller; managers may list a workspace’s',
    description:
      'Without `workspace`: invitations addressed to the caller’s email plus those the caller sent. With `workspace`: ' +
      'managers+ of it see all of its invitations; anyone else only their own within it (an unknown workspace gives an ' +
      'empty list). `status`: `all` (default), `pending` (not yet accepted and not expired), `accepted`. Items carry ' +
      '`expired` or `revoked` (replaced by a newer invitation) as status where that applies. Newest first; `limit` ' +
      'default 50, max 500.',
    tags: TAGS,
    query: ListInvitationsQuery,
    responses: { 200: { description: 'Invitations', schema: InvitationList } },
    handler: async ({ query, user, memberOf }) => {
      let scope: InvitationScope = { kind: 'own', userId: user.id, email: user.email };
      if (query.workspace !== undefined) {
        const access = await memberOf(query.workspace);
        scope =
          access && atLeast(access.role, 'manager')
            ? { kind: 'workspace', workspaceId: access.id }
            : { ...scope, workspaceName: query.workspace };
      }
      return invitations.list(scope, query);
    },
  });

export const validateInvitation = (invitations: InvitationsService) =>
  openRoute({
    method: 'post',
    path: '/api/invitations/validate',
    summary: 'Check an invitation code (open, no login)',
    description:
      'Always 200 for a well-formed request: `valid` says whether the code can be accepted now. When it cannot, ' +
      '`reason` is `not_found` (unknown code; no other fields), `expired`, `accepted` (already used) or `revoked` ' +
      '(replaced by a newer invitation). For a known code the answer names the workspace, role, invited email and ' +
      'expiry.',
    tags: TAGS,
    body: InvitationCodeRequest,
    responses: { 200: { description: 'The verdict', schema: InvitationValidation } },
    handler: ({ body }) => invitations.validate(body.invitationCode),
  });

export const acceptInvitation = (invitations: InvitationsService) =>
  userRoute({
    method: 'post',
    path: '/api/invitations/accept',
    summary: 'Accept an invitation: the caller joins the workspace with its role',
    description:
      'The signed-in user’s email must equal the invited address (case-insensitive), else 403. A member keeps a ' +
      'higher role they already hold; the answer gives the resulting role. A code works once: a used code is 409 ' +
      '(`conflict`, `reason: "accepted"`); an expired or replaced one is 410 (`gone`, `reason: "expired"` or ' +
      '`"revoked"`); an unknown one 404.',
    tags: TAGS,
    body: InvitationCodeRequest,
    responses: {
      200: { description: 'Joined', schema: AcceptedInvitation },
      403: { description: 'The invitation is for another email address', schema: ErrorBodyDto },
      404: { description: 'Unknown code', schema: ErrorBodyDto },
      409: { description: 'Already used', schema: ErrorBodyDto },
      410: { description: 'Expired, or replaced by a newer invitation', schema: ErrorBodyDto },
    },
    handler: ({ body, user }) => invitations.accept(user, body.invitationCode),
  });
