import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configPage, unpaddedTables } from '@hwp/platform';
import { configDocSections } from '../../services/embedded/src/config-docs';

const ROOT = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

describe('the docs', () => {
  test('the configuration page lists every variable the specs validate, as the specs say', () => {
    const page = read('docs/configuration.md');
    // A variable added, renamed or given another default without `pnpm docs:config` fails here.
    expect(unpaddedTables(page)).toBe(unpaddedTables(configPage(page, configDocSections())));
    for (const name of ['AMQP_URL', 'JWT_PRIVATE_KEY', 'SESSION_SECRET', 'API_PORT'])
      expect(unpaddedTables(page)).toContain(`|\`${name}\`|`);
  });

  test('every page the README and the docs link to exists', () => {
    const pages = ['README.md', ...['architecture', 'configuration', 'testing'].map((p) => `docs/${p}.md`)];
    for (const page of pages) {
      const base = page.startsWith('docs/') ? 'docs' : '.';
      for (const [, target] of read(page).matchAll(/\]\(((?:docs\/)?[\w-]+\.md)\)/g)) {
        expect({ page, target, exists: existsSync(join(ROOT, base, target)) }).toEqual({
          page,
          target,
          exists: true,
        });
      }
    }
  });

  test('the README stays a ten-minute read', () => {
    expect(read('README.md').split('\n').length).toBeLessThan(300);
  });
});
