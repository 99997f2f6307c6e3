// Helpers of the HTML report (formatting, DOM building, drawing and checking a chart). Loaded
// before report.js, in the same page; everything is read from the report JSON (docs/analyze.md).
'use strict';

const dc = {};

dc.palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#e377c2', '#17becf',
              '#bcbd22', '#8c564b', '#7f7f7f'];

dc.num = (v) => (typeof v === 'number' && isFinite(v) ? v : 0);
dc.has = (v) => v !== undefined && v !== null;

dc.fmtInt = (v) => (dc.has(v) ? Math.round(dc.num(v)).toLocaleString('en-US') : '');
dc.fmtFixed = (v, digits) => (dc.has(v) && isFinite(v) ? Number(v).toFixed(digits) : '');

dc.fmtBytes = (v) => {
  if (!dc.has(v)) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let x = dc.num(v), i = 0;
  while (Math.abs(x) >= 1024 && i < units.length - 1) { x /= 1024; i++; }
  return (i === 0 ? String(Math.round(x)) : x.toFixed(x >= 100 ? 0 : x >= 10 ? 1 : 2)) + ' ' + units[i];
};

dc.fmtUs = (v) => {
  if (!dc.has(v)) return '';
  const us = dc.num(v);
  if (Math.abs(us) >= 1e6) return (us / 1e6).toFixed(us >= 1e8 ? 0 : 2) + ' s';
  if (Math.abs(us) >= 1e3) return (us / 1e3).toFixed(2) + ' ms';
  return (Number.isInteger(us) ? us : us.toFixed(1)) + ' \u00b5s';
};

// Builds an element: el('td', {class: 'path', 'data-file': f}, 'text' or [children]).
dc.el = (tag, attrs, content) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  const items = Array.isArray(content) ? content : dc.has(content) ? [content] : [];
  for (const c of items) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
};

dc.noData = (parent, why) => parent.append(dc.el('p', {class: 'nodata'}, 'No data: ' + why));

dc.cards = (pairs) =>
  dc.el('div', {class: 'cards'}, pairs.map(([k, v]) =>
    dc.el('div', {class: 'card'}, [dc.el('div', {class: 'v'}, v), dc.el('div', {class: 'k'}, k)])));

// A value for a table cell or key/value list, formatted by what its key says it is.
dc.cell = (v, key) => {
  if (!dc.has(v)) return '';
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))).join(' ');
  if (typeof v === 'object') return Object.entries(v).map(([k, x]) => `${k}=${typeof x === 'object' ? JSON.stringify(x) : x}`).join(' ');
  if (typeof v !== 'number') return String(v);
  const k = String(key || '');
  if (/bytes$/.test(k)) return dc.fmtBytes(v);
  if (/_us$/.test(k)) return dc.fmtUs(v);
  if (/^(pid|ppid|tid|uid|gid|rank|size)$/.test(k) || !Number.isInteger(v)) return Number.isInteger(v) ? String(v) : v.toFixed(3);
  return dc.fmtInt(v);
};

// A key/value list of an object's scalar members; nested objects as JSON text.
dc.kvList = (obj) => {
  const dl = dc.el('dl', {class: 'kv'});
  for (const [k, v] of Object.entries(obj || {})) {
    if (Array.isArray(v) && v.length && typeof v[0] === 'object') continue;  // shown as a table
    dl.append(dc.el('dt', {}, k), dc.el('dd', {}, dc.cell(v, k)));
  }
  return dl;
};

// Columns that say which thing a row is come first when a table finds its columns itself.
dc.identity = ['process', 'system', 'file', 'dir', 'name', 'host', 'pid', 'rank', 'device', 'mount_point', 'when'];

// A table of objects: columns are given as [key, title, format] or found from the rows' keys.
dc.table = (rows, columns, maxRows) => {
  let cols = columns;
  if (!cols) {
    const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    const rank = (k) => (dc.identity.includes(k) ? dc.identity.indexOf(k) : dc.identity.length);
    cols = keys.sort((a, b) => rank(a) - rank(b)).map((k) => [k, k]);
  }
  const isText = (k) => rows.some((r) => dc.has(r[k]) && typeof r[k] !== 'number');
  const shown = rows.slice(0, maxRows || rows.length);
  const thead = dc.el('thead', {}, dc.el('tr', {}, cols.map(([k, t]) =>
    dc.el('th', {'data-key': k, class: isText(k) ? 'text' : ''}, t))));
  const tbody = dc.el('tbody', {}, shown.map((r) => dc.el('tr', {}, cols.map(([k, , f]) =>
    dc.el('td', {class: isText(k) ? 'text' : ''}, f ? f(r[k]) : dc.cell(r[k], k))))));
  const wrap = dc.el('div', {class: 'scroll'}, dc.el('table', {}, [thead, tbody]));
  if (shown.length < rows.length)
    wrap.append(dc.el('p', {class: 'note'}, `Showing ${shown.length} of ${rows.length} rows.`));
  return wrap;
};

// Pixels of the chart's plot area that carry a series colour (saturated): axes, grid lines and
// text are grey, so a chart whose data marks were not drawn counts none.
dc.inkPixels = (chart) => {
  const a = chart.chartArea, r = chart.currentDevicePixelRatio || 1;
  if (!a) return 0;
  const x = Math.max(0, Math.floor(a.left * r)), y = Math.max(0, Math.floor(a.top * r));
  const w = Math.max(1, Math.floor((a.right - a.left) * r)), h = Math.max(1, Math.floor((a.bottom - a.top) * r));
  const d = chart.ctx.getImageData(x, y, w, h).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 4) {
    if (d[i + 3] < 32) continue;
    const hi = Math.max(d[i], d[i + 1], d[i + 2]), lo = Math.min(d[i], d[i + 1], d[i + 2]);
    if (hi - lo > 60) n++;
  }
  return n;
};

// Draws a chart into figure#id and records the outcome on the figure (data-status drawn |
// empty | error, data-ink the coloured pixels), which the browser test reads from the DOM.
dc.chart = (id, build) => {
  const fig = document.getElementById(id);
  try {
    const made = build();
    if (typeof made === 'string') {
      fig.dataset.status = 'empty';
      dc.noData(fig, made);
      return;
    }
    const plot = dc.el('div', {class: 'plot'});
    const canvas = dc.el('canvas', {role: 'img', 'aria-label': fig.querySelector('figcaption').textContent});
    plot.append(canvas);
    fig.append(plot);
    if (made.note) fig.append(dc.el('p', {class: 'note'}, made.note));
    const chart = new Chart(canvas, made.config);
    const ink = dc.inkPixels(chart);
    fig.dataset.ink = String(ink);
    fig.dataset.status = ink > 0 ? 'drawn' : 'blank';
    if (ink === 0) console.error(`chart ${id}: nothing was drawn`);
  } catch (e) {
    fig.dataset.status = 'error';
    dc.noData(fig, 'this chart could not be drawn (' + e.message + ')');
    console.error(`chart ${id}: ${e.stack || e}`);
  }
};

// Runs one section's renderer; a failure marks the section instead of stopping the page.
dc.section = (id, render) => {
  const body = document.getElementById(id);
  try {
    render(body);
  } catch (e) {
    body.dataset.status = 'error';
    dc.noData(body, 'this section could not be rendered (' + e.message + ')');
    console.error(`section ${id}: ${e.stack || e}`);
  }
};

dc.axisTitle = (text) => ({display: true, text});
dc.logAxis = (title) => ({type: 'logarithmic', title: dc.axisTitle(title)});
// Axes whose ticks read as bytes or as durations (values in microseconds).
dc.bytesAxis = (title, extra) => ({...extra, title: dc.axisTitle(title), ticks: {callback: (v) => dc.fmtBytes(v)}});
dc.usLogAxis = (title) => ({type: 'logarithmic', title: dc.axisTitle(title),
  ticks: {callback: (v) => (/^[125]/.test(String(v)) ? dc.fmtUs(v) : '')}});

// Bar datasets from series [[label, values]], coloured from the palette.
dc.bars = (series) => series.map(([label, data], i) =>
  ({label, data, backgroundColor: dc.palette[i % dc.palette.length]}));

dc.anyPositive = (values) => values.some((v) => dc.num(v) > 0);

// Read, write or other, from an operation's name (read, pread64, buffered_read, fread, recvfrom).
dc.direction = (op) => {
  const o = String(op).toLowerCase();
  if (/read|recv|get/.test(o)) return 'read';
  if (/writ|send|put/.test(o)) return 'write';
  return 'other';
};
