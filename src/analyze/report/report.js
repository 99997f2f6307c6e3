// Draws the HTML report from the embedded report JSON (schema: docs/analyze.md). Every section
// copes with an empty or missing part of the JSON by saying "No data" instead of a broken chart.
'use strict';

const R = JSON.parse(document.getElementById('report-data').textContent);
const run = R.run || {};
const amp = R.amplification || {};
const layers = R.layers || [];
const files = R.files || [];

Chart.defaults.animation = false;
Chart.defaults.responsive = true;
Chart.defaults.maintainAspectRatio = false;
Chart.defaults.font.size = 12;

const processLabel = (p) =>
  `${p.host || '?'}:${p.pid}` + (dc.has(p.rank) && p.rank >= 0 ? ` (rank ${p.rank})` : '');

dc.section('run-body', (body) => {
  const procs = run.processes || [];
  const commands = [...new Set(procs.map((p) => p.command).filter(Boolean))];
  document.getElementById('run-command').textContent = commands.length
    ? commands.slice(0, 3).join('  |  ') + (commands.length > 3 ? `  (+${commands.length - 3} more)` : '')
    : '';
  const lost = Object.values(run.lost || {}).reduce((a, b) => a + dc.num(b), 0);
  const start = dc.has(run.start_us) ? new Date(run.start_us / 1000).toISOString().replace('T', ' ') : '';
  body.append(dc.cards([
    ['start (UTC)', start.replace(/\.\d+Z$/, '')], ['wall time', dc.fmtFixed(run.wall_s, 3) + ' s'],
    ['hosts', dc.fmtInt((run.hosts || []).length)], ['processes', dc.fmtInt(procs.length)],
    ['threads', dc.fmtInt(run.threads)], ['events', dc.fmtInt(run.events)], ['lost events', dc.fmtInt(lost)],
  ]));
  if (lost > 0) body.append(dc.el('p', {class: 'note'}, 'Lost by kind: ' + JSON.stringify(run.lost)));
  if (!procs.length) return dc.noData(body, 'no process in the trace');
  body.append(dc.el('h3', {}, 'Processes'), dc.table(procs, [
    ['host', 'host'], ['pid', 'pid'], ['rank', 'rank', (v) => (dc.has(v) && v >= 0 ? String(v) : '')],
    ['size', 'size', (v) => (dc.num(v) > 0 ? String(v) : '')], ['threads', 'threads'],
    ['events', 'events', dc.fmtInt], ['bytes', 'bytes', dc.fmtBytes],
    ['command', 'command'],
  ], 200));
});

// Snapshots (docs/snapshots.md): the system spec per host, the traced processes, directories.
dc.section('system-body', (body) => {
  const snap = R.snapshots || {};
  const sys = snap.system || {};
  const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  // {"<host>": {spec}}; an older form is the spec itself.
  const hosts = Object.values(sys).length && Object.values(sys).every(isObject) ? Object.entries(sys) : [['', sys]];
  let shown = 0;
  for (const [host, spec] of hosts.slice(0, 16)) {
    if (!Object.keys(spec).length) continue;
    shown++;
    body.append(dc.el('h3', {}, host ? `System: ${host}` : 'System'), dc.kvList(spec));
    for (const [k, v] of Object.entries(spec))
      if (Array.isArray(v) && v.length && typeof v[0] === 'object') body.append(dc.el('h3', {}, `${k} (${host || 'system'})`), dc.table(v, null, 100));
  }
  if (hosts.length > 16) body.append(dc.el('p', {class: 'note'}, `The first 16 of ${hosts.length} hosts; all are in the JSON report.`));
  const procs = (snap.processes || []).map(({argv, ...rest}) => rest);  // command holds argv joined
  if (procs.length) body.append(dc.el('h3', {}, 'Traced processes'), dc.table(procs, null, 200));
  const dirs = snap.filesystem || [];
  if (dirs.length) body.append(dc.el('h3', {}, 'Directory snapshots'), dc.table(dirs, null, 200));
  if (!shown && !procs.length && !dirs.length) dc.noData(body, 'the traces carry no snapshot');
});

// Read, write and metadata time per process (run.processes[].io_cost_us {read, write, meta},
// microseconds: the process's POSIX_F_*_TIME over its files); when no process has any (a report
// of DFTracer traces without POSIX files, an older report), the whole job's split, from the
// files' Darshan times (<MODULE>_F_READ_TIME ...), as one bar.
const costOf = (p) => p.io_cost_us || {};

dc.chart('chart-io-cost', () => {
  const fig = document.getElementById('chart-io-cost');
  let rows = (run.processes || []).filter((p) => dc.anyPositive(Object.values(costOf(p))))
    .map((p) => ({label: processLabel(p), read: costOf(p).read, write: costOf(p).write, meta: costOf(p).meta}));
  let note = '', source = 'processes';
  if (!rows.length) {
    const t = (kind) => files.reduce((s, f) => s + dc.num((f.fcounters || {})[`${f.module || 'POSIX'}_F_${kind}_TIME`]) * 1e6, 0);
    rows = [{label: 'all processes', read: t('READ'), write: t('WRITE'), meta: t('META')}];
    if (!dc.anyPositive([rows[0].read, rows[0].write, rows[0].meta])) return 'no I/O time in the report';
    source = 'files';
    note = 'The report has no per-process split: this is the whole job, summed over its files.';
  }
  fig.dataset.source = source;
  const total = (r) => dc.num(r.read) + dc.num(r.write) + dc.num(r.meta);
  rows.sort((x, y) => total(y) - total(x));
  const shown = rows.slice(0, 40);
  fig.dataset.rows = String(shown.length);  // bars drawn (the browser test reads it)
  if (shown.length < rows.length) note = `The ${shown.length} costliest of ${rows.length} processes.`;
  const series = ['read', 'write', 'meta'].map((k) => [k, shown.map((r) => dc.num(r[k]) / 1e6)]);
  return {note, config: {type: 'bar', data: {labels: shown.map((r) => r.label), datasets: dc.bars(series)},
    options: {indexAxis: 'y', scales: {x: {stacked: true, title: dc.axisTitle('seconds')}, y: {stacked: true}}}}};
});

// The seed's rows: one per labelled storage system; when no process was labelled as one, the
// processes that moved the most bytes (the report's per-process rows have the same fields).
const systems = amp.systems || [];
const ampBytes = (r) => ['sys', 'vfs', 'blk'].reduce((s, l) => s + dc.num(r[l + '_read_bytes']) + dc.num(r[l + '_write_bytes']), 0);
const ampAll = systems.length ? systems : (amp.processes || []).filter((r) => ampBytes(r) > 0);
const ampRows = [...ampAll].sort((x, y) => ampBytes(y) - ampBytes(x)).slice(0, 12);
const rowName = (r) => r.system ||
  (dc.has(r.pid) ? `${r.host}:${r.pid}` + (r.command ? ' ' + String(r.command).split(' ')[0].split('/').pop() : '') : '?');
const rowsOf = systems.length ? 'system' : 'process';
document.querySelectorAll('.amp-rows').forEach((e) => { e.textContent = systems.length ? 'system' : 'process (no storage system was labelled)'; });

dc.chart('chart-amp-system', () => {
  if (!dc.anyPositive(ampRows.flatMap((s) => [s.R_AMP, s.W_AMP]))) return `no ${rowsOf} with amplification in the report`;
  return {config: {type: 'bar', data: {labels: ampRows.map(rowName), datasets: dc.bars([
    ['read amplification', ampRows.map((s) => s.R_AMP)], ['write amplification', ampRows.map((s) => s.W_AMP)]])},
    options: {scales: {y: {title: dc.axisTitle('device bytes / application bytes')}}}}};
});

dc.chart('chart-ops-system', () => {
  const ops = (s, l) => dc.num(s[l + '_R']) + dc.num(s[l + '_W']);
  if (!dc.anyPositive(ampRows.flatMap((s) => ['SYS', 'VFS', 'BLK'].map((l) => ops(s, l)))))
    return `no operation counts per ${rowsOf} in the report`;
  return {config: {type: 'bar', data: {labels: ampRows.map(rowName), datasets: dc.bars([
    ['syscall', ampRows.map((s) => ops(s, 'SYS'))], ['VFS', ampRows.map((s) => ops(s, 'VFS'))],
    ['block', ampRows.map((s) => ops(s, 'BLK'))]])},
    options: {scales: {y: dc.logAxis('operations')}}}};
});

dc.chart('chart-latency-system', () => {
  const keys = [...new Set(ampRows.flatMap((s) => Object.keys(s.avg_latency_us || {})))];
  const series = keys.map((k) => [k, ampRows.map((s) => (s.avg_latency_us || {})[k] || null)])
                     .filter(([, v]) => dc.anyPositive(v));
  if (!series.length) return `no latency per ${rowsOf} in the report`;
  return {config: {type: 'bar', data: {labels: ampRows.map(rowName), datasets: dc.bars(series)},
                   options: {scales: {y: dc.usLogAxis('average latency')}}}};
});

dc.chart('chart-amp-scatter', () => {
  const point = (r, key) => ({x: dc.num(r.SYS_R) + dc.num(r.SYS_W), y: r[key], name: rowName(r)});
  const sets = [['read', 'R_AMP'], ['write', 'W_AMP']].map(([label, key], i) => ({
    label, data: ampAll.slice(0, 2000).filter((r) => dc.num(r[key]) > 0 && dc.num(r.SYS_R) + dc.num(r.SYS_W) > 0)
                       .map((r) => point(r, key)),
    backgroundColor: dc.palette[i], pointRadius: 6}));
  if (!sets.some((s) => s.data.length)) return `no amplification per ${rowsOf} in the report`;
  return {config: {type: 'scatter', data: {datasets: sets}, options: {
    scales: {x: dc.logAxis('syscall operations'), y: {title: dc.axisTitle('amplification (x)')}},
    plugins: {tooltip: {callbacks: {label: (c) => `${c.raw.name}: ${c.raw.x} ops, ${c.raw.y.toFixed(2)}x`}}}}}};
});

dc.section('amp-table', (body) => {
  const rows = [...(amp.systems || []), ...(amp.total ? [{...amp.total, system: 'all (total)'}] : [])];
  if (!rows.length) return;
  body.append(dc.el('h3', {}, systems.length ? 'Per system' : 'Totals'), dc.table(rows, [
    ['system', 'system'], ...['SYS_R', 'SYS_W', 'VFS_R', 'VFS_W', 'BLK_R', 'BLK_W'].map((k) => [k, k, dc.fmtInt]),
    ['R_AMP', 'R_AMP', (v) => dc.fmtFixed(v, 2)], ['W_AMP', 'W_AMP', (v) => dc.fmtFixed(v, 2)],
    ...['sys_read_bytes', 'sys_write_bytes', 'blk_read_bytes', 'blk_write_bytes'].map((k) => [k, k, dc.fmtBytes]),
  ]));
});

const layerNames = [...new Set(layers.map((l) => l.layer))];

dc.chart('chart-volume-layer', () => {
  const sum = (name, dir) => layers.filter((l) => l.layer === name && dc.direction(l.op) === dir)
                                   .reduce((s, l) => s + dc.num(l.bytes), 0);
  const series = ['read', 'write', 'other'].map((d) => [d, layerNames.map((n) => sum(n, d))])
                                             .filter(([, v]) => dc.anyPositive(v));
  if (!series.length) return 'no bytes moved by any layer';
  return {config: {type: 'bar', data: {labels: layerNames, datasets: dc.bars(series)},
    options: {scales: {x: {stacked: true}, y: dc.bytesAxis('bytes', {stacked: true})},
              plugins: {tooltip: {callbacks: {label: (c) => `${c.dataset.label}: ${dc.fmtBytes(c.raw)}`}}}}}};
});

dc.chart('chart-latency-layer', () => {
  const rows = layers.filter((l) => l.latency_us && dc.num(l.latency_us.p99) > 0)
                     .sort((a, b) => dc.num(b.count) - dc.num(a.count)).slice(0, 12);
  if (!rows.length) return 'no latency percentiles in the report';
  const series = ['p50', 'p90', 'p99'].map((p) => [p, rows.map((l) => l.latency_us[p] || null)]);
  return {config: {type: 'bar', data: {labels: rows.map((l) => `${l.layer} ${l.op}`), datasets: dc.bars(series)},
                   options: {scales: {y: dc.usLogAxis('latency')}}}};
});

dc.section('layers-table', (body) => {
  if (!layers.length) return dc.noData(body, 'no layer in the trace');
  const rt = R.layer_time || [];
  if (rt.length) body.append(dc.el('h3', {}, 'Time per layer'), dc.table(rt, [
    ['layer', 'layer'], ['time_us', 'time', dc.fmtUs], ['unoverlapped_us', 'not overlapped by another layer', dc.fmtUs]]));
  // Percentiles live in latency_us: flattened for the table.
  const flat = layers.map((l) => ({...l, ...(l.latency_us || {})}));
  body.append(dc.el('h3', {}, 'Operations'), dc.table(flat, [
    ['layer', 'layer'], ['op', 'operation'], ['count', 'count', dc.fmtInt], ['bytes', 'bytes', dc.fmtBytes],
    ['time_us', 'time', dc.fmtUs], ['ops_per_s', 'ops/s', dc.fmtInt], ['mb_per_s', 'MB/s', (v) => dc.fmtFixed(v, 2)],
    ...['p50', 'p90', 'p99', 'max'].map((p) => [p, p, dc.fmtUs]),
  ], 500));
});

const binSeconds = (ts) => (dc.num(ts.bin_ms) || 1) / 1000;
// The page draws at most `limit` time bins: each is the sum of k of the report's (a run with
// thousands of bins stays quick to draw and readable); returns the widened section and a summer.
const coarsen = (section, arrays, limit) => {
  const k = Math.max(1, Math.ceil(arrays.reduce((m, a) => Math.max(m, a.length), 0) / limit));
  const sum = (a) => Array.from({length: Math.ceil(a.length / k)},
                                (_, i) => a.slice(i * k, i * k + k).reduce((s, v) => s + dc.num(v), 0));
  return {wide: {...section, bin_ms: (dc.num(section.bin_ms) || 1) * k}, sum};
};
const binLabels = (ts, n) => Array.from({length: n}, (_, i) => (i * binSeconds(ts)).toFixed(binSeconds(ts) < 1 ? 2 : 0));

dc.chart('chart-bandwidth', () => {
  const ts = R.timeseries || {};
  const raw = Object.entries(ts.layers || {}).filter(([, v]) => dc.anyPositive(v.bytes || []));
  if (!raw.length) return 'no bytes in any time bin';
  const {wide, sum} = coarsen(ts, raw.map(([, v]) => v.bytes), 600);
  const entries = raw.map(([name, v]) => [name, sum(v.bytes)]);
  const n = entries.reduce((m, [, b]) => Math.max(m, b.length), 0);
  const datasets = entries.map(([name, bytes], i) => ({
    label: name, data: bytes.map((b) => b / binSeconds(wide) / 1e6), borderColor: dc.palette[i % 10],
    backgroundColor: dc.palette[i % 10], pointRadius: 0, borderWidth: 2, tension: 0.1}));
  return {config: {type: 'line', data: {labels: binLabels(wide, n), datasets},
    options: {interaction: {mode: 'index', intersect: false},
              scales: {x: {title: dc.axisTitle('seconds since start'), ticks: {maxTicksLimit: 20, maxRotation: 0}},
                       y: {title: dc.axisTitle('MB/s')}}}}};
});

dc.chart('chart-heatmap', () => {
  const section = R.heatmap || {};
  const busy = (section.rows || []).filter((r) => dc.anyPositive(r.bytes || []));
  if (!busy.length) return 'no bytes per process over time';
  const {wide: hm, sum} = coarsen(section, busy.map((r) => r.bytes), 200);
  const rows = busy.map((r) => ({...r, bytes: sum(r.bytes)}));
  const n = rows.reduce((m, r) => Math.max(m, r.bytes.length), 0);
  const max = rows.reduce((m, r) => r.bytes.reduce((mm, v) => Math.max(mm, v), m), 0);
  const names = rows.map((r) => r.process);
  const cells = rows.flatMap((r) => r.bytes.map((b, x) => ({x, y: r.process, v: dc.num(b)}))).filter((c) => c.v > 0);
  const min = cells.reduce((m, c) => Math.min(m, c.v), Infinity);
  // Log colour scale from the smallest to the largest bin (light orange to dark red), so bins
  // orders of magnitude apart still look different.
  const colour = (v) => {
    const t = max > min ? (Math.log(v) - Math.log(min)) / (Math.log(max) - Math.log(min)) : 1;
    const lerp = (a, b) => Math.round(a + (b - a) * t);
    return `rgb(${lerp(253, 128)},${lerp(174, 0)},${lerp(97, 38)})`;
  };
  const step = Math.max(1, Math.round(n / 12));
  return {
    note: [dc.num((R.html || {}).heatmap_rows_total) > (hm.rows || []).length
             ? `The ${(hm.rows || []).length} busiest of ${R.html.heatmap_rows_total} processes.` : '',
           (hm.rows || []).length > rows.length ? `${(hm.rows || []).length - rows.length} processes moved no bytes.` : '',
           hm.layer ? `Layer: ${hm.layer}.` : ''].filter(Boolean).join(' '),
    config: {type: 'matrix', data: {datasets: [{label: 'bytes', data: cells,
      backgroundColor: (c) => colour(c.raw.v),
      width: ({chart}) => Math.max(1, (chart.chartArea || {}).width / n - 1),
      height: ({chart}) => Math.max(1, (chart.chartArea || {}).height / names.length - 1)}]},
      options: {plugins: {legend: {display: false}, tooltip: {callbacks: {
        title: (c) => c[0].raw.y, label: (c) => `bin ${c.raw.x}: ${dc.fmtBytes(c.raw.v)}`}}},
        scales: {x: {type: 'linear', min: -0.5, max: n - 0.5, offset: false,
                     ticks: {stepSize: step, callback: (v) => (Number.isInteger(v) ? +(v * binSeconds(hm)).toFixed(3) : '')},
                     title: dc.axisTitle('seconds since start')},
                 y: {type: 'category', labels: [...names].reverse(), offset: true, grid: {display: false}}}}},
  };
});
