/** A torus around the z axis: ring radius, tube radius, and facets around each (millimetres). */
export interface TorusStl {
  ring: number;
  tube: number;
  /** Steps around the ring and around the tube; the torus has 2 * around * across triangles. */
  around: number;
  across: number;
}

/** A point of the torus and its surface normal, at ring step i and tube step j. */
export function torusPoint(torus: TorusStl, i: number, j: number): { at: number[]; normal: number[] } {
  const u = (2 * Math.PI * (i % torus.around)) / torus.around;
  const v = (2 * Math.PI * (j % torus.across)) / torus.across;
  const normal = [Math.cos(v) * Math.cos(u), Math.cos(v) * Math.sin(u), Math.sin(v)];
  const reach = torus.ring + torus.tube * Math.cos(v);
  return { at: [reach * Math.cos(u), reach * Math.sin(u), torus.tube * Math.sin(v)], normal };
}

/**
 * A binary STL of a closed, finely tessellated torus, each facet with three vertices of its own as
 * CAD systems write STL (shared corners written bit for bit equal). For tests and benches: a smooth
 * closed surface that a simplifier can reduce and a viewer should shade round.
 */
export function torusStl(torus: TorusStl): Buffer {
  const triangles = 2 * torus.around * torus.across;
  const out = Buffer.alloc(84 + triangles * 50);
  out.write('binary STL: torus', 0, 'latin1');
  out.writeUInt32LE(triangles, 80);
  let at = 84;
  for (let i = 0; i < torus.around; i++) {
    for (let j = 0; j < torus.across; j++) {
      const quad = [
        torusPoint(torus, i, j),
        torusPoint(torus, i + 1, j),
        torusPoint(torus, i + 1, j + 1),
        torusPoint(torus, i, j + 1),
      ];
      for (const [a, b, c] of [
        [0, 1, 2],
        [0, 2, 3],
      ]) {
        // The facet normal is left zero, as many writers do: readers compute it.
        at += 12;
        for (const corner of [quad[a], quad[b], quad[c]]) {
          for (const value of corner.at) {
            out.writeFloatLE(value, at);
            at += 4;
          }
        }
        at += 2;
      }
    }
  }
  return out;
}
