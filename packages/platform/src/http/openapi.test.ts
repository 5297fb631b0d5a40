import { ChatHistoryQuery, PageQuery } from '@hwp/contracts';
import { OpenApiBuilder } from './openapi';

/** A list whose query class only extends another (no rule of its own) still documents the inherited ones. */
describe('OpenApiBuilder', () => {
  test('a query class that only extends PageQuery documents page and pageSize', () => {
    const builder = new OpenApiBuilder({ title: 't', version: '1', description: 'd' });
    for (const [path, query] of [
      ['/own', PageQuery],
      ['/inherited', ChatHistoryQuery],
    ] as const) {
      builder.add({ method: 'get', path, summary: 's', query, responses: { 200: { description: 'ok' } } });
    }
    const paths = builder.build().paths as Record<string, { get: { parameters: { name: string }[] } }>;
    for (const path of ['/own', '/inherited']) {
      expect(paths[path].get.parameters.map((p) => p.name).sort()).toEqual(['page', 'pageSize']);
    }
  });
});
