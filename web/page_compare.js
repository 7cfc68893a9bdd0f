// page_compare.js — two runs side by side: their charts overlaid (time from
// each run's start) and a table of deltas, overall and per endpoint.

import {getJson, runPath} from './api.js';
import {lineChart} from './chart.js';
import {errorBox, fill, fmtDuration, fmtInt, fmtMs, fmtNum, fmtPct, h, hashQuery, isActive,
  setHashQuery, table} from './dom.js';
import {RunSeries} from './series.js';

const COLORS = {a: '#2563eb', b: '#ea580c'};

export function render(main) {
  const q = hashQuery();
  const pick = {a: q.get('a') || '', b: q.get('b') || ''};
  const selA = h('select#compare-a', {onchange: () => { pick.a = selA.value; load(); }});
  const selB = h('select#compare-b', {onchange: () => { pick.b = selB.value; load(); }});
  const body = h('div#compare-body');
  let timer = null, closed = false;
  fill(main, h('h1', 'Compare runs'),
    h('div.toolbar', h('label', 'Run A ', selA), h('label', 'Run B ', selB)), body);

  getJson('/api/v1/runs').then(r => {
    const runs = r.runs || [];
    for (const [sel, key] of [[selA, 'a'], [selB, 'b']]) {
      fill(sel, h('option', {value: ''}, '— pick a run —'),
        runs.map(run => h('option', {value: String(run.id)}, `#${run.id} ${run.name} (${run.state})`)));
      sel.value = pick[key];
    }
    if (!pick.a && !pick.b && runs.length >= 2) {
      pick.a = String(runs[1].id);
      pick.b = String(runs[0].id);
      selA.value = pick.a;
      selB.value = pick.b;
    }
    load();
  }).catch(err => fill(body, errorBox(err)));

  async function load() {
    clearTimeout(timer);
    setHashQuery('/compare', pick);
    if (!pick.a || !pick.b) {
      fill(body, h('p.muted', 'Pick two runs to compare (or tick two in the run list).'));
      return;
    }
    try {
      const [a, b] = await Promise.all([pick.a, pick.b].map(loadRun));
      if (closed) return;
      draw(body, a, b);
      if (isActive(a.run) || isActive(b.run)) timer = setTimeout(load, 2000);
    } catch (err) {
      fill(body, errorBox(err));
    }
  }

  return () => { closed = true; clearTimeout(timer); };
}

async function loadRun(id) {
  const run = await getJson(runPath(id));
  const series = new RunSeries(id);
  await series.update(run).catch(() => {});
  return {run, series};
}

function draw(body, a, b) {
  const label = x => `#${x.run.id} ${x.run.name}`;
  const overlay = (title, unit, field) => lineChart({title, unit, series: [
    {name: label(a), color: COLORS.a, points: a.series.points(field)},
    {name: label(b), color: COLORS.b, points: b.series.points(field), dashed: true},
  ]});
  fill(body,
    h('section.charts#compare-charts',
      overlay('Requests per second', 'req/s', 'rps'),
      overlay('p95 latency', 'ms', 'p95_ms'),
      overlay('Failures per second', 'fail/s', 'failures_per_s'),
      overlay('Users', 'users', 'users')),
    h('h2', 'Totals'), deltaTable(a.run, b.run),
    h('h2', 'Endpoints'), endpointDeltas(a.run, b.run));
}

// A metric row: its value in A and B, the change, and whether the change is
// better or worse (higher is better for throughput, worse for latency).
function metricRow(name, va, vb, fmt, higherIsBetter) {
  return {name, va, vb, fmt, higherIsBetter};
}

function deltaTable(a, b) {
  const ta = a.totals || {}, tb = b.totals || {};
  const la = ta.latency_ms || {}, lb = tb.latency_ms || {};
  const rate = t => (t.requests ? t.failures / t.requests : null);
  const rows = [
    metricRow('state', a.state, b.state, String, null),
    metricRow('verdict', a.verdict || '—', b.verdict || '—', String, null),
    metricRow('duration', a.duration_s, b.duration_s, fmtDuration, null),
    metricRow('users', a.users_granted ?? a.users, b.users_granted ?? b.users, fmtInt, null),
    metricRow('requests', ta.requests, tb.requests, fmtInt, null),
    metricRow('requests/s', ta.rps, tb.rps, fmtNum, true),
    metricRow('failures', ta.failures, tb.failures, fmtInt, false),
    metricRow('error rate', rate(ta), rate(tb), fmtPct, false),
    metricRow('p50', la.p50, lb.p50, fmtMs, false),
    metricRow('p90', la.p90, lb.p90, fmtMs, false),
    metricRow('p95', la.p95, lb.p95, fmtMs, false),
    metricRow('p99', la.p99, lb.p99, fmtMs, false),
    metricRow('max', la.max, lb.max, fmtMs, false),
  ];
  return table([
    {label: 'metric', cell: r => r.name},
    {label: `A: #${a.id}`, num: true, cell: r => r.fmt(r.va)},
    {label: `B: #${b.id}`, num: true, cell: r => r.fmt(r.vb)},
    {label: 'B − A', num: true, cell: r => delta(r)},
    {label: 'change', num: true, cell: r => change(r)},
  ], rows, {attrs: {id: 'delta-table'}});
}

function numeric(r) {
  return typeof r.va === 'number' && typeof r.vb === 'number';
}

function delta(r) {
  if (!numeric(r)) return r.va === r.vb ? 'same' : 'differs';
  const d = r.vb - r.va;
  return (d > 0 ? '+' : '') + r.fmt(d);
}

function change(r) {
  if (!numeric(r) || r.va === 0) return '—';
  const pct = (r.vb - r.va) / Math.abs(r.va);
  const text = `${pct > 0 ? '+' : ''}${fmtNum(pct * 100)} %`;
  if (r.higherIsBetter === null || Math.abs(pct) < 0.02) return text;
  const better = (pct > 0) === r.higherIsBetter;
  return h(better ? 'span.good' : 'span.bad', text);
}

function endpointDeltas(a, b) {
  const byName = new Map();
  for (const e of a.endpoints || []) byName.set(e.name, {name: e.name, a: e});
  for (const e of b.endpoints || []) byName.set(e.name, {...(byName.get(e.name) || {name: e.name}), b: e});
  const p95 = e => (e && e.latency_ms ? e.latency_ms.p95 : null);
  const rows = [...byName.values()];
  return table([
    {label: 'endpoint', cell: r => r.name},
    {label: 'req/s A', num: true, cell: r => fmtNum(r.a && r.a.rps)},
    {label: 'req/s B', num: true, cell: r => fmtNum(r.b && r.b.rps)},
    {label: 'Δ req/s', num: true, cell: r => change(metricRow('', r.a && r.a.rps, r.b && r.b.rps, fmtNum, true))},
    {label: 'p95 A', num: true, cell: r => fmtMs(p95(r.a))},
    {label: 'p95 B', num: true, cell: r => fmtMs(p95(r.b))},
    {label: 'Δ p95', num: true, cell: r => change(metricRow('', p95(r.a), p95(r.b), fmtMs, false))},
    {label: 'failures A', num: true, cell: r => fmtInt(r.a && r.a.failures)},
    {label: 'failures B', num: true, cell: r => fmtInt(r.b && r.b.failures)},
  ], rows, {empty: 'neither run has requests', attrs: {id: 'endpoint-delta-table'}});
}
