import { binary } from '@hwp/platform/test-kit';
import { collabAs, type Stack, type Team, type TestUser } from './collab-test-kit';

/** Shared files over HTTP for the tests of src/modules/shared-files. */
export function filesKit(stack: Stack, t: Team) {
  const as = (user: TestUser) => collabAs(stack.collab.app, user);
  const usernames = new Map<TestUser, string>();
  return {
    as,
    /** The collaboration host's username of a member (their folder's name). */
    async username(user: TestUser): Promise<string> {
      const known = usernames.get(user);
      if (known) return known;
      const [row] = await stack.collab.deps.dataSource.query(
        'SELECT username FROM collab_users WHERE id = $1',
        [user.user.id],
      );
      usernames.set(user, row.username);
      return row.username;
    },
    upload(
      user: TestUser,
      folder: string,
      filename: string,
      content: Buffer | string,
      fields: Record<string, string> = {},
    ) {
      let req = as(user).post('/v1/upload').query({ workspace: t.workspace, username: folder });
      for (const [name, value] of Object.entries(fields)) req = req.field(name, value);
      return req.attach('file', Buffer.from(content), { filename, contentType: 'text/plain' });
    },
    /** An upload whose part carries the file name exactly as given (form-data would cut it to its basename). */
    rawUpload(user: TestUser, folder: string, filename: string, content: string) {
      const boundary = 'rawboundary7f3a';
      const body = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="`),
        Buffer.from(filename, 'utf8'),
        Buffer.from(`"\r\nContent-Type: text/plain\r\n\r\n${content}\r\n--${boundary}--\r\n`),
      ]);
      return as(user)
        .post('/v1/upload')
        .query({ workspace: t.workspace, username: folder })
        .set('Content-Type', `multipart/form-data; boundary=${boundary}`)
        .send(body);
    },
    /** The bytes a path serves (bearer of `user`). */
    async bytes(user: TestUser, folder: string, filename: string): Promise<Buffer> {
      const res = await as(user)
        .get(`/v1/serve/${t.workspace}/${folder}/${encodeURIComponent(filename)}`)
        .buffer(true)
        .parse(binary)
        .expect(200);
      return res.body as Buffer;
    },
    path: (folder: string, filename: string) => `${t.workspace}/${folder}/${filename}`,
  };
}
