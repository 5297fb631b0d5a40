import type { FileMetadata } from '@hwp/contracts';
import { BrepMemoryError, type MeshStats, parseObj, parseStl, tessellate } from '@hwp/geometry';
import { type RasterImage, renderMesh } from '../render/mesh-render';
import { DxfBudgetError, dxfWork, type ParsedDxf, parseDxf } from './dxf';
import { type Detected, dwgVersion } from './sniff';
import { readSolidWorks } from './solidworks';
import { parseStep } from './step';

/** What the content analysis found (run in a worker thread: parsing is CPU work). */
export interface ContentFacts {
  metadata: FileMetadata;
  /** Text for the search index (text-like files), at most MAX_TEXT characters. */
  text?: string;
  /** A drawing as SVG (DXF), sized for the preview; rasterised by sharp outside the worker. */
  svg?: string;
  /** A preview the authoring program saved in the file (a PNG), resized by sharp outside the worker. */
  image?: Uint8Array;
  /** Rendered meshes: the preview and the thumbnail as raw RGB. */
  renders?: { preview: RasterImage; thumbnail: RasterImage };
  /** Why a parser gave up (the file is still stored; what could not be read is unknown). */
  error?: string;
  /** Why the file is refused: over a work budget (the revision ends `failed` with this reason). */
  rejected?: string;
}

export const MAX_TEXT = 1_000_000;
const PREVIEW_SIZE = 512;
const THUMBNAIL_SIZE = 128;

const round = (n: number) => Math.round(n * 1e6) / 1e6;
const UNKNOWN_FACTS: FileMetadata = {
  dimensions: null,
  components: null,
  software: null,
  custom_properties: {},
};

function dimensionsOf(bbox: MeshStats['bbox'], units: string | null): FileMetadata['dimensions'] {
  if (!bbox) return null;
  return {
    width: round(bbox.max[0] - bbox.min[0]),
    height: round(bbox.max[1] - bbox.min[1]),
    depth: round(bbox.max[2] - bbox.min[2]),
    units,
  };
}

/** `units`: null for STL and OBJ, which carry none (the numbers are as stored). */
function meshFacts(mesh: MeshStats, render: boolean, units: string | null = null): ContentFacts {
  return {
    metadata: {
      dimensions: dimensionsOf(mesh.bbox, units),
      components: mesh.components,
      software: null,
      custom_properties: {
        format: mesh.format,
        triangles: mesh.triangles,
        vertices: mesh.vertices,
        bounding_box: mesh.bbox,
      },
    },
    renders: render
      ? {
          preview: renderMesh(mesh.positions, PREVIEW_SIZE, PREVIEW_SIZE),
          thumbnail: renderMesh(mesh.positions, THUMBNAIL_SIZE, THUMBNAIL_SIZE),
        }
      : undefined,
  };
}

const SOLIDWORKS = new Set(['sldprt', 'sldasm', 'slddrw']);

const TEXT_FORMATS = new Set([
  'txt',
  'md',
  'csv',
  'json',
  'xml',
  'html',
  'htm',
  'step',
  'stp',
  'iges',
  'igs',
  'dxf',
  'obj',
]);

/** The `dxf` package's drawer (a plain require: the package ships no types). */
interface DxfHelper {
  readonly parsed: ParsedDxf;
  toSVG(): string;
}

/**
 * The drawing as SVG through the `dxf` package, given a pixel size (its own is 100%, which a
 * rasteriser cannot size) and a white background. Undefined when the drawing has nothing to show
 * or the package cannot read it. The package's own parse is what its drawer expands, so the work
 * budget is counted on it (dxfWork) before anything is expanded: over it, DxfBudgetError.
 */
function drawingSvg(text: string): string | undefined {
  let helper: DxfHelper;
  try {
    const { Helper } = require('dxf') as { Helper: new (text: string) => DxfHelper };
    helper = new Helper(text);
    helper.parsed;
  } catch {
    return undefined;
  }
  dxfWork(helper.parsed);
  try {
    const svg = helper.toSVG();
    const box = /viewBox="([-\d.e]+) ([-\d.e]+) ([-\d.e]+) ([-\d.e]+)"/.exec(svg);
    const [w, h] = box ? [Number(box[3]), Number(box[4])] : [0, 0];
    if (!(w > 0 && h > 0)) return undefined;
    const width = PREVIEW_SIZE;
    const height = Math.max(1, Math.round((PREVIEW_SIZE * h) / w));
    return svg
      .replace('width="100%" height="100%"', `width="${width}" height="${height}"`)
      .replace(/stroke-width="[^"]*%"/, `stroke-width="${(Math.max(w, h) / PREVIEW_SIZE) * 1.5}"`);
  } catch {
    return undefined;
  }
}

/** Facts a parser can state about `data`; unknown values are null, never guessed. */
export async function analyzeBuffer(
  data: Buffer,
  extension: string,
  detected: Detected | null,
  render: boolean,
): Promise<ContentFacts> {
  const facts = await parse(data, extension, detected, render);
  if (TEXT_FORMATS.has(extension) || detected === 'text') {
    facts.text = data
      .subarray(0, MAX_TEXT * 2)
      .toString('utf8')
      .replace(/\0/g, ' ')
      .slice(0, MAX_TEXT);
  }
  return facts;
}

async function parse(
  data: Buffer,
  extension: string,
  detected: Detected | null,
  render: boolean,
): Promise<ContentFacts> {
  const unknown: ContentFacts = {
    metadata: { dimensions: null, components: null, software: null, custom_properties: {} },
  };
  try {
    if (extension === 'stl' || detected === 'stl-ascii') return meshFacts(parseStl(data), render);
    if (extension === 'obj') return meshFacts(parseObj(data), render);
    if (detected === 'iges' || (['iges', 'igs'].includes(extension) && detected === 'text')) {
      const mesh = await tessellate(data, 'iges');
      return mesh
        ? meshFacts({ ...mesh, format: 'iges' }, render, 'mm')
        : { ...unknown, metadata: { ...unknown.metadata, custom_properties: { format: 'iges' } } };
    }
    if (detected === 'step') {
      const step = parseStep(data.toString('latin1'));
      // The header and product structure from the text; the geometry from OpenCascade (in mm).
      const mesh = await tessellate(data, 'step');
      const shaded = mesh ? meshFacts(mesh, render, 'mm') : undefined;
      return {
        renders: shaded?.renders,
        metadata: {
          dimensions: shaded?.metadata.dimensions ?? null,
          components: step.products || mesh?.components || null,
          software: step.software,
          custom_properties: {
            format: 'step',
            schema: step.schema,
            units: step.units,
            products: step.products,
            assembly_usages: step.assemblyUsages,
            assembly: step.assemblyUsages > 0,
            author: step.author,
            ...(mesh ? { triangles: mesh.triangles, bounding_box: mesh.bbox } : {}),
          },
        },
      };
    }
    if (detected === 'dxf') {
      const text = data.toString('latin1');
      let svg: string | undefined;
      try {
        // Only drawing expands blocks: the budget is counted there, before it.
        svg = render ? drawingSvg(text) : undefined;
      } catch (error) {
        if (error instanceof DxfBudgetError) return { metadata: UNKNOWN_FACTS, rejected: error.message };
        throw error;
      }
      const dxf = parseDxf(text);
      return {
        svg,
        metadata: {
          dimensions: dimensionsOf(dxf.bbox, dxf.units),
          components: null,
          software: null,
          custom_properties: {
            format: 'dxf',
            version: dxf.version,
            layers: dxf.layers,
            entities: dxf.entities,
            units: dxf.units,
          },
        },
      };
    }
    if (SOLIDWORKS.has(extension) && (detected === 'ole' || detected === null)) {
      const sw = readSolidWorks(data);
      return {
        image: render && sw.preview ? sw.preview : undefined,
        metadata: {
          ...unknown.metadata,
          custom_properties: {
            format: extension,
            container: sw.container,
            ...(sw.streams ? { streams: sw.streams } : {}),
            embedded_preview: sw.previewSource,
          },
        },
      };
    }
    if (detected === 'dwg') {
      const version = dwgVersion(data);
      return {
        metadata: {
          ...unknown.metadata,
          custom_properties: {
            format: 'dwg',
            version: version?.code ?? null,
            release: version?.release ?? null,
          },
        },
      };
    }
  } catch (error) {
    // Over the worker's memory: the file is refused with the reason, like the other budgets.
    if (error instanceof BrepMemoryError) return { ...unknown, rejected: error.message };
    return { ...unknown, error: error instanceof Error ? error.message : String(error) };
  }
  return unknown;
}
