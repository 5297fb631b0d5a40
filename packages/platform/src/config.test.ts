import { baseConfigSpecs, ConfigError, loadConfig } from './config';

describe('loadConfig', () => {
  it('applies the documented defaults when nothing is set', () => {
    const config = loadConfig({}, baseConfigSpecs(3000));
    expect(config).toEqual(
      expect.objectContaining({
        NODE_ENV: 'development',
        PORT: 3000,
        HOST: '0.0.0.0',
        DATA_DIR: '.data',
        SHUTDOWN_TIMEOUT_MS: 10_000,
        JSON_BODY_LIMIT_KB: 1024,
        MAX_UPLOAD_MB: 200,
      }),
    );
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.AMQP_URL).toBeUndefined();
    expect(config.S3_BUCKET).toBeUndefined();
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('treats empty strings as unset, as docker-compose writes blanks', () => {
    expect(loadConfig({ DATABASE_URL: '', PORT: '' }, baseConfigSpecs(4000)).PORT).toBe(4000);
  });

  it('names every bad variable in one error', () => {
    let error: unknown;
    try {
      loadConfig(
        { PORT: 'x', NODE_ENV: 'staging', SHUTDOWN_TIMEOUT_MS: '-5', AMQP_URL: 'nope' },
        baseConfigSpecs(3000),
      );
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(Object.keys((error as ConfigError).problems).sort()).toEqual([
      'AMQP_URL',
      'NODE_ENV',
      'PORT',
      'SHUTDOWN_TIMEOUT_MS',
    ]);
    expect((error as Error).message).toMatch(/^Invalid configuration: .*PORT/);
  });

  it('refuses half of a pair of S3 credentials', () => {
    expect(() => loadConfig({ S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'k' }, baseConfigSpecs(3000))).toThrow(
      /S3_ACCESS_KEY_ID/,
    );
  });
});
