import { corsOrigins, DEV_ORIGINS } from './cors';

describe('corsOrigins', () => {
  it('is CORS_ORIGINS when set (trimmed, no trailing slash), else none in production and dev servers elsewhere', () => {
    expect(
      corsOrigins({ CORS_ORIGINS: ' https://app.example.com/ ,https://b.example', NODE_ENV: 'production' }),
    ).toEqual(['https://app.example.com', 'https://b.example']);
    expect(corsOrigins({ CORS_ORIGINS: '', NODE_ENV: 'development' })).toEqual([]);
    expect(corsOrigins({ NODE_ENV: 'production' })).toEqual([]);
    expect(corsOrigins({ NODE_ENV: 'development' })).toEqual(DEV_ORIGINS);
  });
});
