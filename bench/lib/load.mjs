// Shared by the benches that load a host while another user reads: multipart posts, a reader loop
// that records latency and 5xx, and peak RSS of service processes.
import { percentile, round2, rssOf, timedRequest } from './collab.mjs';

/** POSTs one file as multipart/form-data; never throws (a host that went away is a status string). */
export async function multipart(url, token, fields, file) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  form.set('file', new Blob([file.content], { type: file.type }), file.name);
  const started = performance.now();
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    const body = await res.text();
    return { status: res.status, ms: Math.round(performance.now() - started), body };
  } catch (error) {
    // The host went away (the old code's collaboration host ran out of memory on the BOM file).
    return {
      status: `failed: ${error.cause?.code ?? error.message}`,
      ms: Math.round(performance.now() - started),
      body: '',
    };
  }
}

/** Reads in a loop until stopped; returns the latencies and the 5xx count. */
export function reader(base, path, token) {
  const times = [];
  let errors = 0;
  let running = true;
  const done = (async () => {
    while (running) {
      const res = await timedRequest(base, 'GET', path, { token }).catch(() => ({ status: 599, ms: 0 }));
      if (res.status >= 500) errors++;
      else times.push(res.ms);
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      const sorted = times.sort((a, b) => a - b);
      return {
        requests: sorted.length + errors,
        p50: round2(percentile(sorted, 50)),
        p99: round2(percentile(sorted, 99)),
        max: round2(sorted.at(-1) ?? Number.NaN),
        errors5xx: errors,
      };
    },
  };
}

export function peakRss(pids) {
  const peak = Object.fromEntries(pids.map(([name]) => [name, 0]));
  const timer = setInterval(() => {
    for (const [name, pid] of pids) {
      try {
        peak[name] = Math.max(peak[name], rssOf(pid));
      } catch {}
    }
  }, 200);
  return () => {
    clearInterval(timer);
    return Object.fromEntries(Object.entries(peak).map(([k, v]) => [k, `${Math.round(v / 2 ** 20)} MB`]));
  };
}
