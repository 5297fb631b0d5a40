/**
 * A strict reader of the Prometheus text exposition format 0.0.4 for tests: `# HELP` / `# TYPE`
 * lines, samples `name{label="value",...} value`, families contiguous, histogram series with
 * `_bucket` (cumulative, ending in `le="+Inf"` equal to `_count`), `_sum` and `_count`. Anything else
 * throws with the line. (parse-prometheus-text-format, the npm parser, merges labelled histogram
 * series into one and drops their labels, so it cannot check what we expose.)
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface MetricFamily {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;

function parseValue(text: string, line: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  const value = Number(text);
  if (text === '' || Number.isNaN(value)) throw new Error(`bad sample value in: ${line}`);
  return value;
}

function parseLabels(text: string | undefined, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  if (!text) return labels;
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const match = LABEL.exec(text);
    if (!match) throw new Error(`bad labels in: ${line}`);
    if (match[1] in labels) throw new Error(`label ${match[1]} repeated in: ${line}`);
    labels[match[1]] = match[2].replace(/\\(["\\n])/g, (_all, c: string) => (c === 'n' ? '\n' : c));
  }
  return labels;
}

/** The family a sample belongs to (`x_bucket` of histogram `x`, ...). */
function familyOf(sample: string, families: Map<string, MetricFamily>): MetricFamily | undefined {
  if (families.has(sample)) return families.get(sample);
  for (const suffix of ['_bucket', '_sum', '_count']) {
    const base = sample.endsWith(suffix) ? families.get(sample.slice(0, -suffix.length)) : undefined;
    if (base && (base.type === 'histogram' || (base.type === 'summary' && suffix !== '_bucket'))) return base;
  }
  return undefined;
}

function checkHistogram(family: MetricFamily): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (sample.name.endsWith('_bucket')) {
      if (le === undefined) throw new Error(`${sample.name} without le`);
      entry.buckets.push([parseValue(le, sample.name), sample.value]);
    } else if (sample.name.endsWith('_count')) entry.count = sample.value;
  }
  for (const [key, { buckets, count }] of series) {
    const sorted = [...buckets].sort((a, b) => a[0] - b[0]);
    sorted.forEach(([, v], i) => {
      if (i > 0 && v < sorted[i - 1][1]) throw new Error(`${family.name}${key}: buckets not cumulative`);
    });
    const inf = sorted.at(-1);
    if (!inf || inf[0] !== Number.POSITIVE_INFINITY || inf[1] !== count)
      throw new Error(`${family.name}${key}: le="+Inf" must equal _count`);
  }
}

/** Parses a /metrics answer; throws on text that is not the exposition format. */
export function parseMetrics(text: string): Map<string, MetricFamily> {
  const families = new Map<string, MetricFamily>();
  let current: MetricFamily | undefined;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const meta = /^#\s+(HELP|TYPE)\s+(\S+)\s*(.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta;
      if (!NAME.test(name)) throw new Error(`bad metric name in: ${line}`);
      let family = families.get(name);
      if (!family) {
        family = { name, help: '', type: 'untyped', samples: [] };
        families.set(name, family);
      } else if (family !== current) throw new Error(`family ${name} is not contiguous`);
      current = family;
      if (kind === 'HELP') family.help = rest;
      else {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest))
          throw new Error(`bad TYPE in: ${line}`);
        family.type = rest as MetricFamily['type'];
      }
      continue;
    }
    if (line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const [, name, labelText, valueText] = match;
    const family = familyOf(name, families);
    if (!family || family !== current) throw new Error(`sample outside its family: ${line}`);
    family.samples.push({ name, labels: parseLabels(labelText, line), value: parseValue(valueText, line) });
  }
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/**
 * The value of the first series of `name` whose labels include `labels` (a histogram's `_count`),
 * or undefined.
 */
export function seriesValue(
  families: Map<string, MetricFamily>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const family = families.get(name);
  const wanted = family?.type === 'histogram' ? `${name}_count` : name;
  const sample = family?.samples.find(
    (s) => s.name === wanted && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return sample?.value;
}
