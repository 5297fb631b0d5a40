import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The fenced code blocks of the README's "Adding a feature" section, without their first (path) line. */
function featureBlocks(): string[] {
  const readme = read('README.md');
  const section = readme.slice(
    readme.indexOf('### Adding a feature'),
    readme.indexOf('\n## ', readme.indexOf('### Adding a feature')),
  );
  return [...section.matchAll(/```ts\n\/\/ [^\n]*\n([\s\S]*?)```/g)].map((m) => m[1]);
}

describe('the README example of adding a feature', () => {
  test('is the compiled example file, and the route it shows is the one in the code', () => {
    const [feature, route] = featureBlocks();
    const example = read('test/readme/adding-a-feature.example.ts');
    const region = example.slice(
      example.indexOf('// readme-example:start\n') + '// readme-example:start\n'.length,
      example.indexOf('// readme-example:end'),
    );
    expect(feature).toBe(region);
    expect(read('services/collab-service/src/modules/boms/routes/boms.routes.ts')).toContain(route.trimEnd());
  });
});
