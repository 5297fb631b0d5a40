import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');

/** Every `*.feature.ts` under a folder, at any depth. */
function featureFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.feature.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe.each(['api-service', 'collab-service'])('the features of %s', (service) => {
  const modules = join(ROOT, 'services', service, 'src', 'modules');

  test('one feature per folder, the file and the feature named like the folder', () => {
    const folders = readdirSync(modules, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    const found = featureFiles(modules).map((path) => {
      const [folder, ...rest] = path.slice(modules.length + 1).split('/');
      const name = /\n {2}name: '([^']+)'/.exec(readFileSync(path, 'utf8'))?.[1];
      return { folder, file: rest.join('/'), name };
    });
    expect(found).toEqual(folders.map((folder) => ({ folder, file: `${folder}.feature.ts`, name: folder })));
  });

  test('the service lists each feature once', () => {
    const service_ = readFileSync(join(ROOT, 'services', service, 'src', 'service.ts'), 'utf8');
    const listed =
      /features: \[([^\]]*)\]/
        .exec(service_)?.[1]
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean) ?? [];
    expect(new Set(listed).size).toBe(listed.length);
    expect(listed.length).toBe(featureFiles(modules).length);
  });
});
