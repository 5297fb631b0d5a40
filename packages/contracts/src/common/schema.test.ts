import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, ValidateNested } from 'class-validator';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import { refused } from '../test-support/refused';
import { ItemsOf, PageOf } from './paging';
import { FreeFormObject, NestedList, Nullable } from './schema';

class Leaf {
  @IsInt()
  size: number;
}

class Sample {
  @IsIn(['open', 'closed'])
  @Nullable()
  status: 'open' | 'closed' | null;

  @IsString()
  @Nullable()
  note: string | null;

  @ValidateNested()
  @Type(() => Leaf)
  @Nullable()
  leaf: Leaf | null;

  @IsOptional()
  @FreeFormObject('Anything')
  extra?: Record<string, unknown>;

  @IsOptional()
  @NestedList(() => Leaf)
  leaves?: Leaf[];
}

/** Nullable only documents a response; a request takes what its other decorators allow. */
class SampleRequest {
  @IsOptional()
  @FreeFormObject('Anything')
  extra?: Record<string, unknown>;

  @IsOptional()
  @NestedList(() => Leaf)
  leaves?: Leaf[];
}

const SampleItems = ItemsOf(Sample, 'SampleItems');
const SamplePage = PageOf(Sample, 'SamplePage');

const { defaultMetadataStorage } = require('class-transformer/cjs/storage');
const schemas = () =>
  validationMetadatasToSchemas({ classTransformerMetadataStorage: defaultMetadataStorage }) as Record<
    string,
    { properties: Record<string, Record<string, unknown>> }
  >;

describe('schema helpers', () => {
  test('Nullable adds null to the type, to an enum, and around a reference', () => {
    const { properties } = schemas().Sample;
    expect(properties.note).toEqual({ type: ['string', 'null'] });
    // An enum lists its values: without null among them, null would not validate against it.
    expect(properties.status).toMatchObject({ enum: ['open', 'closed', null] });
    expect(properties.leaf).toEqual({ anyOf: [{ $ref: '#/definitions/Leaf' }, { type: 'null' }] });
  });

  test('FreeFormObject: an object with any properties, never a list or a string', () => {
    expect(schemas().Sample.properties.extra).toEqual({
      type: 'object',
      additionalProperties: true,
      description: 'Anything',
    });
    expect(refused(SampleRequest, { extra: { a: 1 } })).toEqual([]);
    expect(refused(SampleRequest, { extra: [1] })).toEqual(['extra']);
    expect(refused(SampleRequest, { extra: 'a=1' })).toEqual(['extra']);
  });

  test('NestedList validates every item as its class, and refuses a single object', () => {
    expect(refused(SampleRequest, { leaves: [{ size: 1 }, { size: 2 }] })).toEqual([]);
    expect(refused(SampleRequest, { leaves: [{ size: 1 }, { size: 'big' }] })).toEqual(['leaves.1.size']);
    expect(refused(SampleRequest, { leaves: [{ size: 1 }, { size: 2, colour: 'red' }] })).toEqual([
      'leaves.1.colour',
    ]);
    expect(refused(SampleRequest, { leaves: { size: 1 } })).toEqual(['leaves']);
    expect(schemas().Sample.properties.leaves).toMatchObject({
      type: 'array',
      items: { $ref: '#/definitions/Leaf' },
    });
  });

  test('each generated list class carries its own schema name', () => {
    expect(SampleItems.name).toBe('SampleItems');
    expect(SamplePage.name).toBe('SamplePage');
    const all = schemas();
    expect(Object.keys(all.SamplePage.properties).sort()).toEqual(['items', 'page', 'pageSize', 'total']);
    expect(Object.keys(all.SampleItems.properties)).toEqual(['items']);
  });
});
