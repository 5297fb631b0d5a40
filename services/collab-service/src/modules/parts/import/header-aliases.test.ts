import { headerKey, normaliseHeaders } from '../../../spreadsheets/headers';
import { PART_IMPORT_ALIASES } from './header-aliases';

describe('normaliseHeaders', () => {
  it.each(['part number', 'part_number', 'pn', 'partNumber', 'PART-NUMBER', ' Part No. ', 'P/N'])(
    'maps %j to partNumber',
    (header) => {
      expect(normaliseHeaders([header], PART_IMPORT_ALIASES).columns).toEqual({ partNumber: header });
    },
  );

  it('maps every spelling of the document, keeping the original headers', () => {
    const headers = [
      'Name',
      'manufacturer_part_number',
      'MPN ',
      'Manufacturer',
      'unit_cost',
      'Currency',
      'rohs_compliant',
      'REACH',
      'Conflict Minerals',
      'unit_of_measure',
      'Life_Cycle',
      'attrs',
      'Tags',
      'Domain',
      'Description',
    ];
    const { columns, unknown, duplicates } = normaliseHeaders(headers, PART_IMPORT_ALIASES);
    expect(columns).toEqual({
      name: 'Name',
      manufacturerPartNumber: 'manufacturer_part_number',
      manufacturerName: 'Manufacturer',
      unitCost: 'unit_cost',
      currency: 'Currency',
      rohsCompliant: 'rohs_compliant',
      reachCompliant: 'REACH',
      conflictMinerals: 'Conflict Minerals',
      uom: 'unit_of_measure',
      lifecycle: 'Life_Cycle',
      attributes: 'attrs',
      tags: 'Tags',
      domain: 'Domain',
      description: 'Description',
    });
    expect(unknown).toEqual([]);
    expect(duplicates).toEqual([
      { field: 'manufacturerPartNumber', headers: ['manufacturer_part_number', 'MPN '] },
    ]);
  });

  it('reports unknown headers without failing', () => {
    const { columns, unknown } = normaliseHeaders(['pn', 'Colour', 'weight_g'], PART_IMPORT_ALIASES);
    expect(columns).toEqual({ partNumber: 'pn' });
    expect(unknown).toEqual(['Colour', 'weight_g']);
  });

  it('has no alias that names two fields', () => {
    const keys = Object.entries(PART_IMPORT_ALIASES).flatMap(([field, aliases]) =>
      [field, ...aliases].map(headerKey).map((key) => `${key}:${field}`),
    );
    const owners = new Map<string, Set<string>>();
    for (const entry of keys) {
      const [key, field] = entry.split(':');
      owners.set(key, (owners.get(key) ?? new Set()).add(field));
    }
    expect([...owners].filter(([, fields]) => fields.size > 1)).toEqual([]);
    expect(() => normaliseHeaders([], { a: ['x'], b: ['X'] })).toThrow('alias "X" names both a and b');
  });
});
