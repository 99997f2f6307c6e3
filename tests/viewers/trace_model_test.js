// DataCrumbs traces as Chrome-trace viewers read them: loaded with @tracerbench/trace-model (a
// maintained Chrome trace model from the npm registry) and checked against the rules of
// Perfetto's JSON importer (read from its source: src/trace_processor/sorter/trace_sorter.h,
// importers/json/json_trace_{tokenizer,parser_impl}.cc, importers/common/slice_tracker.cc):
//  - every line but metadata needs a numeric ts (else the tokenizer drops it); trace-model sorts
//    every line by ts, so metadata needs one too;
//  - spans are sorted by ts, then (Perfetto since its "slow sorting" of JSON) longer first, then
//    file order; a span nests under the open span that contains it; an open span is closed
//    when a new one starts at or after its end (intervals are closed on the left, open on the
//    right), except that two zero-duration spans at one timestamp stack; a span that starts
//    inside an open one and ends after it is dropped (partial overlap);
//  - trace-model nests by start order only: a span is the child of the nearest open span that
//    ends at or after it ends;
//  - a "C" line draws each arg as a series named "<name> id: <id> <arg>" per process: every arg
//    must be a number, and one series has one sample per timestamp.
// Checks, for each trace: every line is in the model; processes and threads are named; each
// span's parent, in both viewers, is its p_idx parent; no partially overlapping spans on any
// track; counters as above. A span whose place the microsecond format cannot say (zero
// duration, in the microsecond where another span starts or ends: inside it or not, the
// integers are the same) may be put on either side by a viewer; those are counted and printed,
// and must be what the format explains.
//
// usage: node trace_model_test.js TRACE.pfw.gz...
'use strict';
const fs = require('fs');
const zlib = require('zlib');
const { buildModel } = require('@tracerbench/trace-model');

const failures = [];
function fail(message) {
  failures.push(message);
}
const show = (e) => JSON.stringify(e).slice(0, 300);
const end = (e) => e.ts + e.dur;

function readTrace(file) {
  const text = zlib.gunzipSync(fs.readFileSync(file)).toString('utf8');
  const lines = text.split('\n').filter((l) => l.length > 0);
  if (lines[0] !== '[' || lines[lines.length - 1] !== ']') fail(`${file}: not a "[" ... "]" trace`);
  return lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
}

// Perfetto's slice tracker over one track: the parent of each span, or 'dropped'.
function perfettoParents(spans) {
  const order = spans.map((e, i) => [e, i]);
  order.sort((a, b) => a[0].ts - b[0].ts || b[0].dur - a[0].dur || a[1] - b[1]);
  const parent = new Map();
  const stack = [];
  for (const [e] of order) {
    let dropped = false;
    while (stack.length) {
      const top = stack[stack.length - 1];
      const topEnd = end(top);
      if (topEnd < e.ts || (topEnd === e.ts && !(top.dur === 0 && e.dur === 0))) {
        stack.pop();
        continue;
      }
      if (e.ts < topEnd && end(e) > topEnd) dropped = true;
      break;
    }
    if (dropped) {
      parent.set(e, 'dropped');
      continue;
    }
    parent.set(e, stack.length ? stack[stack.length - 1] : undefined);
    stack.push(e);
  }
  return parent;
}

function checkTrace(file) {
  const events = readTrace(file);
  const model = buildModel(events);
  const stats = { events: events.length, spans: 0, counters: 0, excused: { 'trace-model': 0, perfetto: 0 } };

  // Every line is in the model, and every span in its thread's events.
  if (model.events.length !== events.length) fail(`${file}: ${events.length} lines, ${model.events.length} in the model`);
  const modelOf = new Map(model.events.map((m) => [m.traceEvent, m]));
  const threadEvents = new Map();
  for (const p of model.processes)
    for (const t of p.threads) threadEvents.set(`${p.id}/${t.id}`, { name: t.name, events: new Set(t.events) });
  const processNames = new Map(model.processes.map((p) => [p.id, p.name]));

  const lanes = new Set();
  for (const e of events) {
    if (typeof e.ts !== 'number') fail(`${file}: a line without a numeric ts: ${show(e)}`);
    for (const k of ['pid', 'tid'])
      if (!Number.isInteger(e[k]) || e[k] < 0 || e[k] >= 2 ** 32) fail(`${file}: ${k} is not a uint32: ${show(e)}`);
    if (e.ph === 'M' && e.name === 'thread_name' && e.args.lane) lanes.add(`${e.pid}/${e.tid}`);
  }

  const tracks = new Map();
  const series = new Set();
  for (const e of events) {
    if (e.ph === 'M') continue;
    const track = `${e.pid}/${e.tid}`;
    if (!processNames.get(e.pid)) fail(`${file}: process ${e.pid} has no name`);
    if (e.ph === 'C') {
      ++stats.counters;
      if (typeof e.dur !== 'number') fail(`${file}: a counter sample without dur: ${show(e)}`);
      if (typeof e.id !== 'string') fail(`${file}: a counter sample without a series id: ${show(e)}`);
      for (const [k, v] of Object.entries(e.args)) {
        if (typeof v !== 'number') fail(`${file}: a counter arg that is not a number: ${k} in ${show(e)}`);
        if (k === 'fhash' || k === 'hhash') fail(`${file}: an identifier drawn as a series: ${show(e)}`);
        const key = `${e.pid}|${e.name} id: ${e.id} ${k}|${e.ts}`;
        if (series.has(key)) fail(`${file}: two samples of one series at one time: ${key}`);
        series.add(key);
      }
      continue;
    }
    if (e.ph !== 'X') {
      fail(`${file}: unexpected ph: ${show(e)}`);
      continue;
    }
    ++stats.spans;
    const thread = threadEvents.get(track);
    if (!thread || !thread.events.has(modelOf.get(e))) fail(`${file}: a span missing from its thread: ${show(e)}`);
    else if (!thread.name) fail(`${file}: thread ${track} has no name`);
    if (!tracks.has(track)) tracks.set(track, []);
    tracks.get(track).push(e);
  }

  for (const [track, spans] of tracks) {
    const byId = new Map(spans.map((e) => [e.id, e]));
    const expected = new Map();
    for (const e of spans) {
      const p = e.args.p_idx;
      if (lanes.has(track) || p === undefined || p < 0) expected.set(e, undefined);
      else if (byId.has(p)) expected.set(e, byId.get(p));
      else fail(`${file}: a span whose p_idx parent is not on its track: ${show(e)}`);
    }
    const ancestors = (e) => {
      const out = new Set();
      for (let a = expected.get(e); a; a = expected.get(a)) out.add(a);
      return out;
    };
    const tm = new Map(spans.map((e) => [e, modelOf.get(e).parent ? modelOf.get(e).parent.traceEvent : undefined]));
    const pf = perfettoParents(spans);
    for (const [viewer, parentOf] of [['trace-model', tm], ['perfetto', pf]]) {
      for (const e of spans) {
        const got = parentOf.get(e), want = expected.get(e);
        if (got === want) continue;
        if (got === 'dropped') {
          fail(`${file}: ${viewer} drops a partially overlapping span on ${track}: ${show(e)}`);
          continue;
        }
        // Zero duration in the microsecond where the span it was put in starts or ends (or at
        // the top), and where its true parent ends (or is above that span); or in the
        // microsecond where its true parent ends, put in an ancestor of that parent (the viewer
        // closed the parent first, as the integers allow): the integers say nothing more.
        const gotTouches = !got || got.ts === e.ts || end(got) === e.ts;
        const wantExplains = !want || end(want) === e.ts || (got && ancestors(got).has(want));
        const closedWantFirst = want && end(want) === e.ts && (!got || ancestors(want).has(got));
        if (e.dur === 0 && ((gotTouches && wantExplains) || closedWantFirst)) {
          ++stats.excused[viewer];
          continue;
        }
        fail(`${file}: ${viewer} nests ${show(e)}\n    under ${got ? show(got) : 'nothing'}\n    p_idx says ${want ? show(want) : 'nothing'}`);
      }
    }
  }
  return stats;
}

if (process.argv.length < 3) {
  console.error('usage: node trace_model_test.js TRACE.pfw.gz...');
  process.exit(2);
}
for (const file of process.argv.slice(2)) {
  const s = checkTrace(file);
  console.log(`${file}: ${s.events} lines, ${s.spans} spans, ${s.counters} counter samples; ` +
              `zero-duration spans the microsecond format leaves ambiguous: trace-model ${s.excused['trace-model']}, ` +
              `Perfetto ${s.excused.perfetto}`);
}
if (failures.length) {
  console.error(`FAIL: ${failures.length} problems`);
  for (const f of failures.slice(0, 40)) console.error('  ' + f);
  process.exit(1);
}
console.log('PASS');
