import { Profile, UpdateProfileRequest } from '@hwp/contracts';
import { forbidden, type TenantRouting } from './tenant-routing';

export const getProfile = ({ signedInRoute, profiles }: TenantRouting) =>
  signedInRoute({
    method: 'get',
    path: '/profile',
    summary: 'Profile of the caller with their tenants',
    tags: ['profile'],
    responses: { 200: { description: 'The profile', schema: Profile }, 403: forbidden },
    handler: ({ user }) => profiles.get(user.id),
  });

export const updateProfile = ({ signedInRoute, profiles }: TenantRouting) =>
  signedInRoute({
    method: 'put',
    path: '/profile',
    summary: 'Update names, avatar or default tenant (null clears)',
    tags: ['profile'],
    body: UpdateProfileRequest,
    responses: {
      200: { description: 'The updated profile', schema: Profile },
      403: forbidden,
    },
    handler: ({ body, user }) => profiles.update(user.id, body),
  });
