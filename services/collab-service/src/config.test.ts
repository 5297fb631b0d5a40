import { ConfigError } from '@hwp/platform';
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
});
