import { refused } from '../test-support/refused';
import { ListInvitationsQuery, SendInvitationRequest } from './invitations.dto';
import { CreateWorkspaceRequest, InitUserRequest } from './workspaces.dto';

describe('workspace requests', () => {
  test.each([
    ['acme', true],
    ['a1', true],
    ['acme.robotics_2-b', true],
    ['w'.repeat(64), true],
    ['a', false], // two characters at least: it is a path segment
    ['w'.repeat(65), false],
    ['Acme', false],
    ['.acme', false],
    ['-acme', false],
    ['acme/x', false],
    ['acme x', false],
  ])('workspace name %s valid: %s', (name, valid) => {
    expect(refused(CreateWorkspaceRequest, { name })).toEqual(valid ? [] : ['name']);
  });

  test.each([
    ['ada', true],
    ['a', true], // a username may be one character
    ['ada.l_2-x', true],
    ['Ada', false],
    ['_ada', false],
    ['ada@example.com', false],
    ['u'.repeat(65), false],
  ])('username %s valid: %s', (username, valid) => {
    expect(refused(InitUserRequest, { username })).toEqual(valid ? [] : ['username']);
  });

  test('invitations: an email address, a known role, a listed status and a limit of 1 to 500', () => {
    const invite = { email: 'ada@example.com', workspace: 'acme' };
    expect(refused(SendInvitationRequest, { ...invite, role: 'manager', invitedBy: 'ignored' })).toEqual([]);
    expect(refused(SendInvitationRequest, { ...invite, email: 'ada' })).toEqual(['email']);
    expect(refused(SendInvitationRequest, { ...invite, role: 'admin' })).toEqual(['role']);
    expect(refused(ListInvitationsQuery, { status: 'pending', limit: '500' }, 'query')).toEqual([]);
    expect(refused(ListInvitationsQuery, { limit: '0' }, 'query')).toEqual(['limit']);
    expect(refused(ListInvitationsQuery, { limit: '501' }, 'query')).toEqual(['limit']);
    expect(refused(ListInvitationsQuery, { status: 'expired' }, 'query')).toEqual(['status']);
  });
});
