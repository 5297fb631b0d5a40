/** An axis-aligned box: its lower corner and its size (millimetres). */
export interface StepBox {
  at: [number, number, number];
  size: [number, number, number];
}

/** The faces of a box as corner numbers (bit 0: +x, bit 1: +y, bit 2: +z), counter-clockwise seen from outside. */
const FACES: { corners: [number, number, number, number]; normal: [number, number, number] }[] = [
  { corners: [0, 2, 3, 1], normal: [0, 0, -1] },
  { corners: [4, 5, 7, 6], normal: [0, 0, 1] },
  { corners: [0, 1, 5, 4], normal: [0, -1, 0] },
  { corners: [2, 6, 7, 3], normal: [0, 1, 0] },
  { corners: [0, 4, 6, 2], normal: [-1, 0, 0] },
  { corners: [1, 3, 7, 5], normal: [1, 0, 0] },
];

const real = (n: number) => (Number.isInteger(n) ? `${n}.` : String(n));
const triple = (v: readonly number[]) => `(${v.map(real).join(',')})`;

/**
 * A STEP AP214 part whose shape is the given boxes, each a B-rep solid (planar faces, line edges) in
 * millimetres: what a CAD system exports for blocks. For tests, benches and sample data: OpenCascade
 * tessellates each face into two triangles with four vertices of its own.
 */
export function stepBoxes(boxes: StepBox[], name = 'boxes'): string {
  const lines: string[] = [];
  let next = 1;
  const add = (entity: string) => {
    const id = next++;
    lines.push(`#${id}=${entity};`);
    return `#${id}`;
  };
  const appContext = add("APPLICATION_CONTEXT('automotive design')");
  add(`APPLICATION_PROTOCOL_DEFINITION('international standard','automotive_design',2000,${appContext})`);
  const productContext = add(`PRODUCT_CONTEXT('',${appContext},'mechanical')`);
  const product = add(`PRODUCT('${name}','${name}','',(${productContext}))`);
  const formation = add(`PRODUCT_DEFINITION_FORMATION('','',${product})`);
  const definitionContext = add(`PRODUCT_DEFINITION_CONTEXT('part definition',${appContext},'design')`);
  const definition = add(`PRODUCT_DEFINITION('design','',${formation},${definitionContext})`);
  const shape = add(`PRODUCT_DEFINITION_SHAPE('','',${definition})`);
  const length = add('(LENGTH_UNIT()NAMED_UNIT(*)SI_UNIT(.MILLI.,.METRE.))');
  const angle = add('(NAMED_UNIT(*)PLANE_ANGLE_UNIT()SI_UNIT($,.RADIAN.))');
  const solidAngle = add('(NAMED_UNIT(*)SI_UNIT($,.STERADIAN.)SOLID_ANGLE_UNIT())');
  const uncertainty = add(
    `UNCERTAINTY_MEASURE_WITH_UNIT(LENGTH_MEASURE(1.E-07),${length},'distance_accuracy_value','')`,
  );
  const context = add(
    `(GEOMETRIC_REPRESENTATION_CONTEXT(3)GLOBAL_UNCERTAINTY_ASSIGNED_CONTEXT((${uncertainty}))` +
      `GLOBAL_UNIT_ASSIGNED_CONTEXT((${length},${angle},${solidAngle}))REPRESENTATION_CONTEXT('',''))`,
  );
  const origin = add("CARTESIAN_POINT('',(0.,0.,0.))");
  const placement = add(
    `AXIS2_PLACEMENT_3D('',${origin},${add("DIRECTION('',(0.,0.,1.))")},${add("DIRECTION('',(1.,0.,0.))")})`,
  );
  const solids: string[] = [];
  for (const [b, box] of boxes.entries()) {
    const corner = (i: number): [number, number, number] => [
      box.at[0] + (i & 1 ? box.size[0] : 0),
      box.at[1] + (i & 2 ? box.size[1] : 0),
      box.at[2] + (i & 4 ? box.size[2] : 0),
    ];
    const points = Array.from({ length: 8 }, (_, i) => add(`CARTESIAN_POINT('',${triple(corner(i))})`));
    const vertices = points.map((p) => add(`VERTEX_POINT('',${p})`));
    const edges = new Map<string, string>();
    const edge = (a: number, b: number) => {
      const [lo, hi] = a < b ? [a, b] : [b, a];
      const key = `${lo}-${hi}`;
      let id = edges.get(key);
      if (!id) {
        const [p, q] = [corner(lo), corner(hi)];
        const d = [q[0] - p[0], q[1] - p[1], q[2] - p[2]];
        const len = Math.hypot(d[0], d[1], d[2]);
        const direction = add(`DIRECTION('',${triple(d.map((x) => x / len))})`);
        const line = add(`LINE('',${points[lo]},${add(`VECTOR('',${direction},${real(len)})`)})`);
        id = add(`EDGE_CURVE('',${vertices[lo]},${vertices[hi]},${line},.T.)`);
        edges.set(key, id);
      }
      return add(`ORIENTED_EDGE('',*,*,${id},${a < b ? '.T.' : '.F.'})`);
    };
    const faces = FACES.map(({ corners, normal }) => {
      const loop = add(`EDGE_LOOP('',(${corners.map((c, i) => edge(c, corners[(i + 1) % 4])).join(',')}))`);
      const bound = add(`FACE_OUTER_BOUND('',${loop},.T.)`);
      const reference = normal[0] === 0 ? [1, 0, 0] : [0, 1, 0];
      const axis = add(
        `AXIS2_PLACEMENT_3D('',${points[corners[0]]},${add(`DIRECTION('',${triple(normal)})`)},${add(`DIRECTION('',${triple(reference)})`)})`,
      );
      return add(`ADVANCED_FACE('',(${bound}),${add(`PLANE('',${axis})`)},.T.)`);
    });
    solids.push(add(`MANIFOLD_SOLID_BREP('box ${b + 1}',${add(`CLOSED_SHELL('',(${faces.join(',')}))`)})`));
  }
  const representation = add(
    `ADVANCED_BREP_SHAPE_REPRESENTATION('${name}',(${[placement, ...solids].join(',')}),${context})`,
  );
  add(`SHAPE_DEFINITION_REPRESENTATION(${shape},${representation})`);
  return [
    'ISO-10303-21;',
    'HEADER;',
    "FILE_DESCRIPTION(('boxes'),'2;1');",
    `FILE_NAME('${name}.stp','2026-01-01T00:00:00',('hwp'),('hwp'),'hwp','hwp','');`,
    "FILE_SCHEMA(('AUTOMOTIVE_DESIGN { 1 0 10303 214 1 1 1 1 }'));",
    'ENDSEC;',
    'DATA;',
    ...lines,
    'ENDSEC;',
    'END-ISO-10303-21;',
    '',
  ].join('\n');
}
