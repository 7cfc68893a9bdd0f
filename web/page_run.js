// page_run.js — one run: state, live charts (refreshed every second while it
// runs), per-endpoint and error tables, the stop button and its reports.

import {ApiError, getBlob, getJson, postJson, runPath} from './api.js';
import {lineChart} from './chart.js';
import {badge, errorBox, fill, fmtBytes, fmtDuration, fmtInt, fmtMs, fmtNum, fmtPct, fmtTime, h,
  isActive, table, tile} from './dom.js';
import {RunSeries} from './series.js';

const REPORTS = [
  {file: 'report.json', label: 'JSON'},
  {file: 'report.csv', label: 'CSV'},
  {file: 'failures.csv', label: 'Failures CSV'},
  {file: 'report.junit.xml', label: 'JUnit XML'},
  {file: 'history.csv', label: 'History CSV'},
];

export function render(main, {id}) {
  const series = new RunSeries(id);
  const head = h('section.run-head');
  const note = h('div.note', {role: 'status'});
  const tiles = h('section.tiles');
  const charts = h('section.charts#run-charts');
  const details = h('section.details');
  fill(main, head, note, tiles, charts, details);
  let timer = null, closed = false, run = null, lastError = null;

  async function refresh() {
    timer = null;
    try {
      run = await getJson(runPath(id));
      await series.update(run).catch(err => { lastError = err; });
      draw();
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        fill(main, h('h1', `Run ${id}`), errorBox(err), h('p', h('a', {href: '#/runs'}, '← all runs')));
        return;
      }
      fill(note, errorBox(err));
    }
    if (!closed && (run === null || isActive(run)))
      timer = setTimeout(refresh, 1000);
  }

  function draw() {
    drawHead();
    fill(note, lastError ? errorBox(`history: ${lastError.message}`) : null,
      !series.fromHistory && isActive(run)
        ? h('p.muted', 'This master has no history endpoint: the charts show the seconds seen since the page opened.')
        : null);
    lastError = null;
    drawTiles();
    drawCharts();
    drawDetails();
  }

  function drawHead() {
    const stop = isActive(run) ? stopControl() : null;
    fill(head,
      h('div.title-row',
        h('h1', `Run ${run.id}: `, h('span#run-name', run.name)),
        h('span#run-state', {dataset: {state: run.state}}, badge(run.state)),
        run.verdict ? h('span#run-verdict', badge(run.verdict)) : null,
        h('span.spacer'), h('a', {href: `#/compare?a=${run.id}`}, 'Compare with…'), stop),
      h('dl.facts',
        fact('tenant', run.tenant), fact('created', fmtTime(run.created_at)),
        fact('started', fmtTime(run.started_at)), fact('finished', fmtTime(run.finished_at)),
        fact('duration', fmtDuration(run.duration_s)),
        fact('users', `${fmtInt(run.users_granted)} granted of ${fmtInt(run.users_requested ?? run.users)}`),
        run.reason ? fact('reason', run.reason) : null),
      (run.warnings || []).length || run.queued
        ? h('ul.warnings', run.queued ? h('li', 'queued: waiting for fleet capacity') : null,
          (run.warnings || []).map(w => h('li', typeof w === 'string' ? w : JSON.stringify(w))))
        : null,
      reportLinks());
  }

  function stopControl() {
    if (run.state === 'stopping') return h('span.muted', 'stopping…');
    const box = h('span.stop-box');
    const ask = h('button.danger#stop-run', {type: 'button', onclick: () => {
      fill(box, h('span', 'Stop this run? '),
        h('button.danger#stop-confirm', {type: 'button', onclick: doStop}, 'Stop now'),
        h('button#stop-cancel', {type: 'button', onclick: () => fill(box, ask)}, 'Cancel'));
    }}, 'Stop run');
    return fill(box, ask);
  }

  async function doStop(ev) {
    ev.target.disabled = true;
    try {
      await postJson(`${runPath(id)}/stop`);
    } catch (err) {
      fill(note, errorBox(`stop: ${err.message}`));
    }
    clearTimeout(timer);
    refresh();
  }

  function reportLinks() {
    const status = h('span.muted.report-status');
    // report.html opens the report in a tab of its own (it fetches it with
    // the token, which the new tab gets with a copy of sessionStorage: hence
    // rel="opener").
    const open = h('a#report-html', {href: `/ui/report.html#run=${encodeURIComponent(id)}`, target: '_blank',
      rel: 'opener'}, 'HTML report');
    return h('div.reports', h('span.muted', 'Reports: '), open,
      REPORTS.map(r => [' · ', h('a', {href: '#', dataset: {report: r.file}, onclick: ev => {
        ev.preventDefault();
        download(r.file, status);
      }}, r.label)]), ' ', status);
  }

  // The reports need the token, so a plain link cannot fetch them: fetch,
  // then hand the browser a blob: URL to save.
  async function download(file, status) {
    try {
      const blob = await getBlob(`${runPath(id)}/${file}`);
      const url = URL.createObjectURL(blob);
      const a = h('a', {href: url, download: `run-${id}-${file}`});
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
      fill(status);
    } catch (err) {
      fill(status, `${file}: ${err.message}`);
    }
  }

  function drawTiles() {
    const t = run.totals || {}, lat = t.latency_ms || {};
    const errRate = t.requests ? t.failures / t.requests : null;
    const cur = run.current && isActive(run) ? run.current : null;
    fill(tiles,
      tile('requests', fmtInt(t.requests), `${fmtBytes(t.bytes)} received`),
      tile('requests/s', fmtNum(t.rps), cur ? `now ${fmtNum(cur.rps)}` : 'average'),
      tile('failures', fmtInt(t.failures), fmtPct(errRate)),
      tile('p50', fmtMs(lat.p50), `mean ${fmtMs(lat.mean)}`),
      tile('p95', fmtMs(lat.p95), cur ? `now ${fmtMs(cur.p95_ms)}` : null),
      tile('p99', fmtMs(lat.p99), `max ${fmtMs(lat.max)}`),
      tile('users', fmtInt(cur ? cur.users : run.users_granted), t.dropped ? `${fmtInt(t.dropped)} dropped starts` : null));
  }

  function drawCharts() {
    const lat = [['p50', 'p50_ms'], ['p95', 'p95_ms'], ['p99', 'p99_ms']]
      .filter(([, f]) => series.has(f) || series.seconds.size === 0)
      .map(([name, f]) => ({name, points: series.points(f)}));
    fill(charts,
      lineChart({title: 'Requests per second', unit: 'req/s', series: [{name: 'requests/s', points: series.points('rps')}]}),
      lineChart({title: 'Failures per second', unit: 'fail/s',
        series: [{name: 'failures/s', color: '#dc2626', points: series.points('failures_per_s')}]}),
      lineChart({title: 'Latency', unit: 'ms', series: lat}),
      lineChart({title: 'Users', unit: 'users', series: [{name: 'users', color: '#16a34a', points: series.points('users')}]}));
  }

  function drawDetails() {
    const thresholds = Array.isArray(run.thresholds) && run.thresholds.length
      ? [h('h2', 'Thresholds'), genericTable(run.thresholds, 'thresholds')] : [];
    const all = run.endpoints || [];
    const timers = all.filter(isTimer);
    const journeys = timers.length
      ? [h('h2', 'Journeys and groups'), timerTable(timers)] : [];
    const checks = Array.isArray(run.checks) && run.checks.length
      ? [h('h2', 'Checks'), table([
          {label: 'check', cell: c => c.name},
          {label: 'passed', num: true, cell: c => fmtInt(c.passed)},
          {label: 'failed', num: true, cell: c => fmtInt(c.failed)},
        ], run.checks, {attrs: {id: 'checks-table'}})] : [];
    fill(details, thresholds,
      h('h2', 'Endpoints'), endpointTable(all.filter(e => !isTimer(e))), ...journeys,
      h('h2', 'Errors'), table([
        {label: 'endpoint', cell: e => e.endpoint},
        {label: 'kind', cell: e => e.kind},
        {label: 'count', num: true, cell: e => fmtInt(e.count)},
        {label: 'first message', cell: e => e.first_message || ''},
      ], run.errors || [], {empty: 'no errors', attrs: {id: 'errors-table'}}), ...checks);
  }

  refresh();
  return () => { closed = true; clearTimeout(timer); };
}

function fact(label, value) {
  return h('div.fact', h('dt', label), h('dd', value ?? '—'));
}

// A journey's iterations and groups come as series of their own (methods
// ITERATION and GROUP): durations, not requests.
function isTimer(e) {
  return e.method === 'ITERATION' || e.method === 'GROUP';
}

function timerTable(rows) {
  return table([
    {label: 'journey or group', cell: e => e.name.replace(/^(iteration|group):/, '')},
    {label: 'kind', cell: e => (e.method === 'ITERATION' ? 'iteration' : 'group')},
    {label: 'count', num: true, cell: e => fmtInt(e.requests)},
    {label: 'failed', num: true, cell: e => fmtInt(e.failures)},
    {label: 'p50', num: true, cell: e => fmtMs(e.latency_ms && e.latency_ms.p50)},
    {label: 'p95', num: true, cell: e => fmtMs(e.latency_ms && e.latency_ms.p95)},
    {label: 'p99', num: true, cell: e => fmtMs(e.latency_ms && e.latency_ms.p99)},
    {label: 'max', num: true, cell: e => fmtMs(e.latency_ms && e.latency_ms.max)},
  ], rows, {attrs: {id: 'journeys-table'}});
}

export function endpointTable(endpoints) {
  return table([
    {label: 'endpoint', cell: e => e.name},
    {label: 'method', cell: e => e.method},
    {label: 'requests', num: true, cell: e => fmtInt(e.requests)},
    {label: 'failures', num: true, cell: e => fmtInt(e.failures)},
    {label: 'req/s', num: true, cell: e => fmtNum(e.rps)},
    {label: 'p50', num: true, cell: e => fmtMs(e.latency_ms && e.latency_ms.p50)},
    {label: 'p95', num: true, cell: e => fmtMs(e.latency_ms && e.latency_ms.p95)},
    {label: 'p99', num: true, cell: e => fmtMs(e.latency_ms && e.latency_ms.p99)},
    {label: 'max', num: true, cell: e => fmtMs(e.latency_ms && e.latency_ms.max)},
  ], endpoints, {empty: 'no requests yet', attrs: {id: 'endpoints-table'}});
}

// Rows of objects whose fields are not fixed (thresholds): one column per
// key; booleans named pass/passed/ok become badges.
function genericTable(rows, id) {
  const keys = [...new Set(rows.flatMap(r => (r && typeof r === 'object' ? Object.keys(r) : [])))];
  return table(keys.map(k => ({label: k, cell: r => cellOf(r[k])})), rows, {attrs: {id}});
}

function cellOf(v) {
  if (typeof v === 'boolean') return badge(v ? 'pass' : 'fail');
  if (typeof v === 'number') return fmtNum(v);
  if (v === null || v === undefined) return '—';
  if (v === 'pass' || v === 'fail') return badge(v);
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}
