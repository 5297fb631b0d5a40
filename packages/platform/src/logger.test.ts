import { Writable } from 'node:stream';
import { createLogger, redactUrl } from './logger';

describe('log redaction', () => {
  it('replaces credential-like query values and keeps the rest of the URL', () => {
    expect(redactUrl('/auth/verify?type=magiclink&token=123456&redirect_to=%2Fhome')).toBe(
      '/auth/verify?type=magiclink&token=[redacted]&redirect_to=%2Fhome',
    );
    expect(redactUrl('/ws?token=eyJhbGciOi.x.y')).toBe('/ws?token=[redacted]');
    expect(redactUrl('/x?code=1&Password=p&refresh_token=r&a%5Bb%5D=1&access_token=t')).toBe(
      '/x?code=[redacted]&Password=[redacted]&refresh_token=[redacted]&a%5Bb%5D=1&access_token=[redacted]',
    );
    expect(redactUrl('/v1/parts?workspace=w&q=token')).toBe('/v1/parts?workspace=w&q=token');
    expect(redactUrl('/plain')).toBe('/plain');
  });

  it('never writes passwords, tokens or authorization headers of logged objects', () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger({ service: 'test', level: 'info', destination });
    logger.info(
      {
        password: 'hunter2',
        body: { refresh_token: 'rt-secret', nested: { token: 'tk-secret' } },
        req: { headers: { authorization: 'Bearer abc', cookie: 'sid=1' } },
        code: 'validation_failed',
      },
      'attempt',
    );
    const line = lines.join('');
    for (const secret of ['hunter2', 'rt-secret', 'tk-secret', 'Bearer abc', 'sid=1'])
      expect(line).not.toContain(secret);
    expect(JSON.parse(line).code).toBe('validation_failed');
  });
});
