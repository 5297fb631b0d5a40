import { refused } from '../test-support/refused';
import { CreateTenantRequest, UpdateProfileRequest, UpdateTenantRequest } from './tenants.dto';

describe('tenant validators', () => {
  test.each([
    ['acme', true],
    ['a1', true],
    ['acme-robotics', true],
    ['a-b-c', true],
    ['x'.repeat(63), true],
    ['a', false], // 2 characters at least
    ['x'.repeat(64), false],
    ['acme--robotics', false], // single dashes only
    ['-acme', false],
    ['acme-', false],
    ['Acme', false],
    ['acme_robotics', false],
    ['acme.io', false],
  ])('slug %s valid: %s', (slug, valid) => {
    expect(refused(CreateTenantRequest, { name: 'Acme', slug })).toEqual(valid ? [] : ['slug']);
    expect(refused(UpdateTenantRequest, { slug })).toEqual(valid ? [] : ['slug']);
  });

  test('settings replace the stored object: an object, never a list or a string', () => {
    expect(refused(UpdateTenantRequest, { settings: { locale: 'de' } })).toEqual([]);
    expect(refused(UpdateTenantRequest, { settings: ['de'] })).toEqual(['settings']);
    expect(refused(UpdateTenantRequest, { settings: 'locale=de' })).toEqual(['settings']);
  });

  test('a profile update clears a name or the avatar with null; an avatar is an http(s) URL', () => {
    expect(refused(UpdateProfileRequest, { first_name: null, avatar_url: null })).toEqual([]);
    expect(refused(UpdateProfileRequest, { avatar_url: 'https://cdn.example.com/a.png' })).toEqual([]);
    expect(refused(UpdateProfileRequest, { avatar_url: 'cdn.example.com/a.png' })).toEqual(['avatar_url']);
    expect(refused(UpdateProfileRequest, { avatar_url: 'data:image/png;base64,AAAA' })).toEqual([
      'avatar_url',
    ]);
    expect(refused(UpdateProfileRequest, { first_name: 'A'.repeat(101) })).toEqual(['first_name']);
    expect(refused(UpdateProfileRequest, { default_tenant_id: 'acme' })).toEqual(['default_tenant_id']);
  });
});
