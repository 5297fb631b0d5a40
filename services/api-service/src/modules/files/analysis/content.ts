import type { FileMetadata } from '@hwp/contracts';
import { type RasterImage, renderMesh } from '../render/mesh-render';
import { parseDxf } from './dxf';
import { type MeshStats, parseObj, parseStl } from './mesh';
import { type Detected, dwgVersion } from './sniff';
import { parseStep } from './step';

/** What the content analysis found (run in a worker thread: parsing is CPU work). */
export interface ContentFacts {
  metadata: FileMetadata;
  /** Text for the search index (text-like files), at most MAX_TEXT characters. */
  text?: string;
  /** Rendered meshes: the preview and the thumbnail as raw RGB. */
  renders?: { preview: RasterImage; thumbnail: RasterImage };
  /** Why a parser gave up (the file is still stored; what could not be read is unknown). */
  error?: string;
}

export const MAX_TEXT = 1_000_000;
const PREVIEW_SIZE = 512;
const THUMBNAIL_SIZE = 128;

const round = (n: number) => Math.round(n * 1e6) / 1e6;

function dimensionsOf(bbox: MeshStats['bbox'], units: string | null): FileMetadata['dimensions'] {
  if (!bbox) return null;
  return {
    width: round(bbox.max[0] - bbox.min[0]),
    height: round(bbox.max[1] - bbox.min[1]),
    depth: round(bbox.max[2] - bbox.min[2]),
    units,
  };
}

function meshFacts(mesh: MeshStats, render: boolean): ContentFacts {
  return {
    metadata: {
      // STL and OBJ carry no unit: the numbers are as stored, the unit unknown.
      dimensions: dimensionsOf(mesh.bbox, null),
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

/** Facts a parser can state about `data`; unknown values are null, never guessed. */
export function analyzeBuffer(
  data: Buffer,
  extension: string,
  detected: Detected | null,
  render: boolean,
): ContentFacts {
  const facts = parse(data, extension, detected, render);
  if (TEXT_FORMATS.has(extension) || detected === 'text') {
    facts.text = data
      .subarray(0, MAX_TEXT * 2)
      .toString('utf8')
      .replace(/\0/g, ' ')
      .slice(0, MAX_TEXT);
  }
  return facts;
}

function parse(data: Buffer, extension: string, detected: Detected | null, render: boolean): ContentFacts {
  const unknown: ContentFacts = {
    metadata: { dimensions: null, components: null, software: null, custom_properties: {} },
  };
  try {
    if (extension === 'stl' || detected === 'stl-ascii') return meshFacts(parseStl(data), render);
    if (extension === 'obj') return meshFacts(parseObj(data), render);
    if (detected === 'step') {
      const step = parseStep(data.toString('latin1'));
      return {
        metadata: {
          dimensions: null,
          components: step.products,
          software: step.software,
          custom_properties: {
            format: 'step',
            schema: step.schema,
            units: step.units,
            products: step.products,
            assembly_usages: step.assemblyUsages,
            assembly: step.assemblyUsages > 0,
            author: step.author,
          },
        },
      };
    }
    if (detected === 'dxf') {
      const dxf = parseDxf(data.toString('latin1'));
      return {
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
    return { ...unknown, error: error instanceof Error ? error.message : String(error) };
  }
  return unknown;
}
