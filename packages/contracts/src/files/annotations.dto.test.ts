import { refused } from '../test-support/refused';
import { ANNOTATION_MOVES, ANNOTATION_STATUSES, CreateAnnotationRequest } from './annotations.dto';

const at = { x: 1, y: 2.5, z: -3 };

describe('annotation requests', () => {
  test('a component target needs its component_id; other targets may leave it out', () => {
    expect(refused(CreateAnnotationRequest, { text: 't', position: at, target: { type: 'point' } })).toEqual(
      [],
    );
    expect(
      refused(CreateAnnotationRequest, {
        text: 't',
        position: at,
        target: { type: 'component', component_id: 'c7' },
      }),
    ).toEqual([]);
    expect(
      refused(CreateAnnotationRequest, { text: 't', position: at, target: { type: 'component' } }),
    ).toEqual(['target.component_id']);
    expect(
      refused(CreateAnnotationRequest, {
        text: 't',
        position: at,
        target: { type: 'component', component_id: '' },
      }),
    ).toEqual(['target.component_id']);
  });

  test('a component_id given on another target is still checked', () => {
    expect(
      refused(CreateAnnotationRequest, {
        text: 't',
        position: at,
        target: { type: 'area', component_id: 'c7' },
      }),
    ).toEqual([]);
    expect(
      refused(CreateAnnotationRequest, {
        text: 't',
        position: at,
        target: { type: 'area', component_id: 7 },
      }),
    ).toEqual(['target.component_id']);
  });

  test('the position is three finite numbers, and required', () => {
    expect(refused(CreateAnnotationRequest, { text: 't' })).toEqual(['position']);
    expect(refused(CreateAnnotationRequest, { text: 't', position: null })).toEqual(['position']);
    expect(refused(CreateAnnotationRequest, { text: 't', position: { x: 1, y: 2 } })).toEqual(['position.z']);
    expect(refused(CreateAnnotationRequest, { text: 't', position: { ...at, x: Number.NaN } })).toEqual([
      'position.x',
    ]);
    expect(
      refused(CreateAnnotationRequest, { text: 't', position: { ...at, y: Number.POSITIVE_INFINITY } }),
    ).toEqual(['position.y']);
    expect(refused(CreateAnnotationRequest, { text: 't', position: { ...at, z: '3' } })).toEqual([
      'position.z',
    ]);
  });

  test.each([
    ['#f80', true],
    ['#FF8800', true],
    ['#ff88', false],
    ['#ff88001', false],
    ['ff8800', false],
    ['#gg8800', false],
    ['red', false],
  ])('color %s valid: %s', (color, valid) => {
    expect(refused(CreateAnnotationRequest, { text: 't', position: at, color })).toEqual(
      valid ? [] : ['color'],
    );
  });

  test('status moves: open <-> in-progress -> resolved -> open, each to a known status', () => {
    for (const from of ANNOTATION_STATUSES)
      for (const to of ANNOTATION_MOVES[from]) expect(ANNOTATION_STATUSES).toContain(to);
    expect(ANNOTATION_MOVES.open).toEqual(['in-progress']);
    expect(ANNOTATION_MOVES.resolved).toEqual(['open']);
    expect(ANNOTATION_MOVES['in-progress']).not.toContain('in-progress');
  });
});
