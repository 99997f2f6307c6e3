// The report's per-file parts (Darshan counters: access sizes and patterns, the top files table),
// page cache, network, diagnostics and inputs. Loaded after report.js.
'use strict';

// Darshan's ten access-size bins, as they end the counter names (POSIX_SIZE_READ_0_100 ...).
const sizeBins = ['0_100', '100_1K', '1K_10K', '10K_100K', '100K_1M', '1M_4M', '4M_10M', '10M_100M',
                  '100M_1G', '1G_PLUS'];
const modules = [...new Set(files.map((f) => f.module).filter(Boolean))];
const counter = (f, name) => dc.num((f.counters || {})[name]);
const sumOver = (m, name) => files.filter((f) => f.module === m).reduce((s, f) => s + counter(f, `${m}_${name}`), 0);

dc.chart('chart-access-size', () => {
  const series = [];
  for (const m of modules)
    for (const dir of ['READ', 'WRITE']) {
      // MPI-IO names its bins SIZE_READ_AGG_*.
      const values = sizeBins.map((b) => sumOver(m, `SIZE_${dir}_${b}`) + sumOver(m, `SIZE_${dir}_AGG_${b}`));
      if (dc.anyPositive(values)) series.push([`${m} ${dir.toLowerCase()}s`, values]);
    }
  if (!series.length) return 'no access-size counters in the report';
  return {config: {type: 'bar', data: {labels: sizeBins.map((b) => b.replace('_PLUS', '+').replace('_', '-')),
    datasets: dc.bars(series)}, options: {scales: {x: {title: dc.axisTitle('request size (bytes)')},
                                                    y: {title: dc.axisTitle('operations')}}}}};
});

dc.chart('chart-access-pattern', () => {
  const labels = [], consec = [], seq = [], random = [];
  for (const m of modules)
    for (const [dir, noun] of [['READS', 'reads'], ['WRITES', 'writes']]) {
      const all = sumOver(m, dir), s = sumOver(m, `SEQ_${dir}`), c = sumOver(m, `CONSEC_${dir}`);
      if (all <= 0 || !files.some((f) => dc.has((f.counters || {})[`${m}_SEQ_${dir}`]))) continue;
      labels.push(`${m} ${noun}`);
      consec.push(c);
      seq.push(Math.max(0, s - c));  // Darshan counts consecutive accesses as sequential too
      random.push(Math.max(0, all - s));
    }
  if (!labels.length) return 'no sequential/consecutive counters in the report';
  return {config: {type: 'bar', data: {labels, datasets: dc.bars([['consecutive', consec],
    ['sequential (not consecutive)', seq], ['random', random]])},
    options: {indexAxis: 'y', scales: {x: {stacked: true, title: dc.axisTitle('operations')}, y: {stacked: true}}}}};
});

const cache = R.page_cache || {};

dc.chart('chart-cache', () => {
  if (!dc.anyPositive([cache.hits, cache.misses])) return 'no page cache lookups in the report';
  return {config: {type: 'doughnut', data: {labels: ['hits', 'misses'], datasets: [{
    data: [dc.num(cache.hits), dc.num(cache.misses)], backgroundColor: [dc.palette[2], dc.palette[3]]}]}}};
});

dc.section('cache-body', (body) => {
  body.append(dc.el('h3', {}, 'Page cache'));
  if (!dc.has(cache.hits)) dc.noData(body, 'no page cache section in the report');
  else body.append(dc.cards([
    ['hit ratio', dc.has(cache.hit_ratio) ? (100 * cache.hit_ratio).toFixed(1) + ' %' : 'n/a'],
    ['hits', dc.fmtInt(cache.hits)], ['misses', dc.fmtInt(cache.misses)],
    ['written back', dc.fmtInt(cache.written_back)], ['evicted', dc.fmtInt(cache.evicted)]]));
  if ((cache.processes || []).length) body.append(dc.table(cache.processes, null, 50));
  const net = R.network || {};
  body.append(dc.el('h3', {}, 'Network'));
  if (!dc.anyPositive([net.bytes_sent, net.bytes_received, net.connections]))
    return dc.noData(body, 'no network traffic in the trace');
  body.append(dc.cards([['sent', dc.fmtBytes(net.bytes_sent)], ['received', dc.fmtBytes(net.bytes_received)],
                        ['connections', dc.fmtInt(net.connections)]]));
  const rest = Object.fromEntries(Object.entries(net).filter(([k]) => !['bytes_sent', 'bytes_received', 'connections'].includes(k)));
  if (Object.keys(rest).length) body.append(dc.kvList(rest));
});

// The top files table: Darshan's counters of each file under its module's prefix, sortable by a
// click on a column, or from the page address (#files-sort=bytes_read or #files-sort=file:asc).
dc.section('files-body', (body) => {
  if (!files.length) return dc.noData(body, 'no file was accessed');
  const fileAmp = new Map((amp.files || []).map((a) => [a.file, a]));
  const rows = files.map((f) => {
    const m = f.module || 'POSIX', c = (n) => counter(f, `${m}_${n}`);
    const t = (n) => dc.num((f.fcounters || {})[`${m}_F_${n}_TIME`]);
    const a = fileAmp.get(f.file) || {};
    return {file: f.file, module: m, opens: c('OPENS') || c('FOPENS'), reads: c('READS'), writes: c('WRITES'),
            bytes_read: c('BYTES_READ'), bytes_written: c('BYTES_WRITTEN'), bytes: c('BYTES_READ') + c('BYTES_WRITTEN'),
            read_s: t('READ'), write_s: t('WRITE'), meta_s: t('META'), r_amp: a.R_AMP, w_amp: a.W_AMP};
  });
  const secs = (v) => dc.fmtUs(dc.num(v) * 1e6);
  const amp2 = (v) => (dc.has(v) ? dc.fmtFixed(v, 2) : '');
  const cols = [['file', 'file'], ['module', 'module'], ['opens', 'opens', dc.fmtInt], ['reads', 'reads', dc.fmtInt],
    ['writes', 'writes', dc.fmtInt], ['bytes_read', 'bytes read', dc.fmtBytes], ['bytes_written', 'bytes written', dc.fmtBytes],
    ['bytes', 'total bytes', dc.fmtBytes], ['read_s', 'read time', secs], ['write_s', 'write time', secs],
    ['meta_s', 'meta time', secs], ['r_amp', 'read amp.', amp2], ['w_amp', 'write amp.', amp2]];
  const limit = 200;
  const table = dc.el('table', {id: 'files-table'});
  const head = dc.el('tr', {}, cols.map(([k, t]) =>
    dc.el('th', {'data-key': k, class: 'sortable' + (k === 'file' || k === 'module' ? ' text' : '')}, t)));
  const tbody = dc.el('tbody');
  table.append(dc.el('thead', {}, head), tbody);
  const sortBy = (key, asc) => {
    const cmp = (a, b) => (typeof a[key] === 'string' ? String(a[key]).localeCompare(String(b[key]))
                                                     : dc.num(a[key]) - dc.num(b[key]));
    rows.sort((a, b) => (asc ? cmp(a, b) : cmp(b, a)) || String(a.file).localeCompare(String(b.file)));
    tbody.replaceChildren(...rows.slice(0, limit).map((r) => dc.el('tr', {'data-file': r.file}, cols.map(([k, , f]) =>
      dc.el('td', {class: k === 'file' ? 'path' : k === 'module' ? 'text' : ''}, (f || dc.cell)(r[k]))))));
    head.querySelectorAll('th').forEach((th) => {
      th.classList.remove('sorted-asc', 'sorted-desc');
      if (th.dataset.key === key) th.classList.add(asc ? 'sorted-asc' : 'sorted-desc');
    });
    table.dataset.sortKey = key;
    table.dataset.sortOrder = asc ? 'asc' : 'desc';
  };
  head.addEventListener('click', (e) => {
    const key = e.target.dataset && e.target.dataset.key;
    if (!key) return;
    sortBy(key, table.dataset.sortKey === key ? table.dataset.sortOrder === 'desc' : key === 'file' || key === 'module');
  });
  const asked = /files-sort=([A-Za-z_]+)(?::(asc|desc))?/.exec(decodeURIComponent(location.hash));
  const askedKey = asked && cols.some(([k]) => k === asked[1]) ? asked[1] : 'bytes';
  sortBy(askedKey, asked ? asked[2] === 'asc' : false);
  const total = dc.num((R.html || {}).files_total) || files.length;
  body.append(dc.el('div', {class: 'scroll'}, table));
  if (total > Math.min(limit, files.length))
    body.append(dc.el('p', {class: 'note'}, `Showing ${Math.min(limit, files.length)} of ${total} files (most bytes first); all are in the JSON report.`));
});

dc.section('diagnostics-body', (body) => {
  const diags = R.diagnostics;
  if (!Array.isArray(diags)) return dc.noData(body, 'no diagnostics section in the report');
  if (!diags.length) return body.append(dc.el('p', {class: 'nodata'}, 'None of the rules fired.'));
  for (const d of diags) {
    const sev = String(d.severity || 'info').toLowerCase();
    const box = dc.el('div', {class: 'diag ' + sev, 'data-rule': d.rule || ''}, [
      dc.el('div', {}, [dc.el('span', {class: 'sev'}, sev), dc.el('span', {class: 'rule'}, d.rule || '')]),
      dc.el('div', {}, d.message || '')]);
    if (d.evidence && Object.keys(d.evidence).length) box.append(dc.kvList(d.evidence));
    body.append(box);
  }
});

dc.section('inputs-body', (body) => {
  const inputs = R.inputs || {};
  const skipped = Object.entries(inputs.skipped || {});
  body.append(dc.cards([['trace files', dc.fmtInt(inputs.files)], ['lines', dc.fmtInt(inputs.lines)],
    ['lines skipped', dc.fmtInt(skipped.reduce((s, [, n]) => s + dc.num(n), 0))]]));
  if (skipped.length) body.append(dc.table(skipped.map(([reason, n]) => ({reason, lines: n}))));
  const problems = inputs.problems || [];
  if (problems.length) {
    body.append(dc.el('h3', {}, 'Problems'));
    body.append(dc.el('pre', {}, problems.slice(0, 100).join('\n')));
  }
});

// What the browser test reads: the errors seen while drawing, and that drawing finished.
const errorBox = document.getElementById('dc-errors');
errorBox.dataset.count = String(window.dcErrors.length);
errorBox.textContent = window.dcErrors.join('\n');
document.body.dataset.rendered = 'done';
