import type { ApiRouter } from '@hwp/platform';
import {
  acceptInvitation,
  acceptInvitationById,
  declineInvitation,
  declineInvitationById,
  listInvitations,
  myInvitations,
  revokeInvitation,
} from './routes/invitations.routes';
import { addMember, listMembers, removeMember, updateMember } from './routes/members.routes';
import { getProfile, updateProfile } from './routes/profile.routes';
import { type TenantRouteDeps, tenantRouting } from './routes/tenant-routing';
import { createTenant, currentTenant, getTenant, listTenants, updateTenant } from './routes/tenants.routes';

export type { TenantRouteDeps } from './routes/tenant-routing';

/**
 * Tenants, memberships and the profile (section 4.4, DECISIONS.md section 2), one file per use case
 * under routes/. The order is the order of the OpenAPI document.
 */
export function mountTenantRoutes(api: ApiRouter, deps: TenantRouteDeps): void {
  const routing = tenantRouting(api, deps);
  for (const mount of [
    createTenant,
    listTenants,
    currentTenant,
    getTenant,
    updateTenant,
    listMembers,
    addMember,
    updateMember,
    removeMember,
    listInvitations,
    revokeInvitation,
    myInvitations,
    acceptInvitation,
    declineInvitation,
    acceptInvitationById,
    declineInvitationById,
    getProfile,
    updateProfile,
  ]) {
    mount(routing);
  }
}
