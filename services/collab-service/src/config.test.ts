import { ConfigError, ownPublicUrl } from '@hwp/platform';
import { loadCollabConfig } from './config';

describe('loadCollabConfig', () => {
  it('refuses as many concurrent imports as database connections (they would wait on each other)', () => {
    let error: unknown;
    try {
      loadCollabConfig({ IMPORT_CONCURRENCY: '4', DB_POOL_SIZE: '4' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toMatchObject({
      IMPORT_CONCURRENCY: 'must be below DB_POOL_SIZE (4): each import holds a connection',
    });
    expect(loadCollabConfig({ IMPORT_CONCURRENCY: '3', DB_POOL_SIZE: '4' }).IMPORT_CONCURRENCY).toBe(3);
  });

  it('takes PUBLIC_COLLAB_URL as its own public URL, the deprecated PUBLIC_BASE_URL in its place', () => {
    const config = loadCollabConfig({
      PUBLIC_COLLAB_URL: 'https://plm.example.com',
      PUBLIC_API_URL: 'https://api.example.com',
    });
    expect(ownPublicUrl(config)).toBe('https://plm.example.com');
    expect(config.PUBLIC_API_URL).toBe('https://api.example.com');
    const old = loadCollabConfig({ PUBLIC_BASE_URL: 'https://old.example.com' });
    expect([ownPublicUrl(old), old.PUBLIC_COLLAB_URL, old.PUBLIC_API_URL]).toEqual([
      'https://old.example.com',
      'https://old.example.com',
      undefined,
    ]);
  });
});
