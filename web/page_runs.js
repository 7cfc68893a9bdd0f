// page_runs.js — the run list: state, tenant, duration, rps, p95, errors and
// verdict of every run, filtered by tenant and state; two ticked runs can be
// compared.

import {getJson, isAdmin, runPath} from './api.js';
import {badge, errorBox, fill, fmtDuration, fmtInt, fmtMs, fmtNum, fmtPct, fmtTime, h, hashQuery,
  isActive, RUN_STATES, runSeconds, setHashQuery, table} from './dom.js';

// The list endpoint leaves latencies and verdicts out (no histogram is read
// for it); they come from each shown run's own view, kept here once a run is
// over (it no longer changes) and fetched again while it is active.
const detailCache = new Map();
const PAGE_SIZE = 50;

export function render(main) {
  const q = hashQuery();
  const filters = {tenant: q.get('tenant') || '', state: q.get('state') || ''};
  const picked = new Set();
  let page = 0, timer = null, closed = false, runs = [];

  const tenantSel = h('select#filter-tenant', {onchange: () => { filters.tenant = tenantSel.value; changed(true); }},
    h('option', {value: ''}, 'all tenants'));
  const stateSel = h('select#filter-state', {onchange: () => { filters.state = stateSel.value; changed(false); }},
    h('option', {value: ''}, 'all states'), RUN_STATES.map(s => h('option', {value: s}, s)));
  stateSel.value = filters.state;
  const compareBtn = h('button#compare-picked', {type: 'button', disabled: true, onclick: () => {
    const [a, b] = [...picked];
    location.hash = `#/compare?a=${a}&b=${b}`;
  }}, 'Compare 2 ticked runs');
  const listBox = h('div#runs-list');
  const pager = h('div.pager');
  fill(main,
    h('div.title-row', h('h1', 'Runs'), h('span.spacer'), h('a.button', {href: '#/new'}, 'New run')),
    h('div.toolbar', isAdmin() ? tenantSel : null, stateSel, compareBtn),
    listBox, pager);

  if (isAdmin())
    getJson('/api/v1/tenants').then(r => {
      for (const t of r.tenants || []) tenantSel.append(h('option', {value: t.name}, t.name));
      if (filters.tenant && ![...tenantSel.options].some(o => o.value === filters.tenant))
        tenantSel.append(h('option', {value: filters.tenant}, filters.tenant));
      tenantSel.value = filters.tenant;
    }).catch(() => {});

  function changed(refetch) {
    setHashQuery('/runs', filters);
    page = 0;
    if (refetch) { clearTimeout(timer); refresh(); } else draw();
  }

  async function refresh() {
    timer = null;
    try {
      const path = filters.tenant ? `/api/v1/runs?tenant=${encodeURIComponent(filters.tenant)}` : '/api/v1/runs';
      runs = (await getJson(path)).runs || [];
      draw();
      await loadDetails(shown());
      draw();
    } catch (err) {
      fill(listBox, errorBox(err));
    }
    if (!closed) timer = setTimeout(refresh, runs.some(isActive) ? 2000 : 5000);
  }

  function filtered() {
    return runs.filter(r => !filters.state || r.state === filters.state);
  }

  function shown() {
    return filtered().slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE);
  }

  function draw() {
    const rows = shown();
    const total = filtered().length;
    fill(listBox, table(columns(), rows, {
      empty: runs.length ? 'no run matches these filters' : 'no runs yet: start one from "New run"',
      attrs: {id: 'runs-table'},
      rowAttrs: r => ({dataset: {run: r.id, state: r.state}}),
    }));
    const pages = Math.ceil(total / PAGE_SIZE);
    fill(pager, pages > 1 ? [
      h('button', {type: 'button', disabled: page === 0, onclick: () => { page--; draw(); loadDetails(shown()).then(draw); }}, '‹ newer'),
      h('span.muted', ` page ${page + 1} of ${pages} (${fmtInt(total)} runs) `),
      h('button', {type: 'button', disabled: page >= pages - 1, onclick: () => { page++; draw(); loadDetails(shown()).then(draw); }}, 'older ›'),
    ] : null);
  }

  function columns() {
    return [
      {label: '', cell: r => h('input', {type: 'checkbox', checked: picked.has(r.id), 'aria-label': `pick run ${r.id}`,
        onchange: ev => {
          if (ev.target.checked) picked.add(r.id); else picked.delete(r.id);
          while (picked.size > 2) picked.delete(picked.values().next().value);
          compareBtn.disabled = picked.size !== 2;
          draw();
        }})},
      {label: 'id', num: true, cell: r => h('a', {href: `#/runs/${r.id}`}, String(r.id))},
      {label: 'name', cell: r => h('a', {href: `#/runs/${r.id}`}, r.name)},
      {label: 'state', cell: r => badge(r.state)},
      {label: 'tenant', cell: r => r.tenant},
      {label: 'started', cell: r => fmtTime(r.started_at || r.created_at)},
      {label: 'duration', num: true, cell: r => fmtDuration(runSeconds(r))},
      {label: 'users', num: true, cell: r => fmtInt(r.users_granted ?? r.users)},
      {label: 'requests', num: true, cell: r => fmtInt(r.requests)},
      {label: 'req/s', num: true, cell: r => fmtNum(r.rps)},
      {label: 'p95', num: true, cell: r => fmtMs(p95Of(r))},
      {label: 'errors', num: true, cell: r => errorsOf(r)},
      {label: 'verdict', cell: r => verdictOf(r)},
    ];
  }

  refresh();
  return () => { closed = true; clearTimeout(timer); };
}

function p95Of(r) {
  if (typeof r.p95_ms === 'number') return r.p95_ms;
  const d = detailCache.get(r.id);
  const lat = d && d.totals && d.totals.latency_ms;
  return lat ? lat.p95 : null;
}

function errorsOf(r) {
  if (!r.failures) return '0';
  return h('span.bad', `${fmtInt(r.failures)} (${fmtPct(r.requests ? r.failures / r.requests : 0)})`);
}

function verdictOf(r) {
  const d = detailCache.get(r.id);
  const v = r.verdict ?? (d ? d.verdict : '');
  return v ? badge(v) : '—';
}

// Fetches the run views the list lacks (p95, verdict): runs not yet seen,
// and active runs again. Four at a time, so a page of 50 loads quickly
// without a burst of 50 requests.
async function loadDetails(rows) {
  const need = rows.filter(r => (typeof r.p95_ms !== 'number' || r.verdict === undefined) &&
    (!detailCache.has(r.id) || isActive(r) || isActive(detailCache.get(r.id))));
  for (let i = 0; i < need.length; i += 4)
    await Promise.all(need.slice(i, i + 4).map(r => getJson(runPath(r.id))
      .then(d => detailCache.set(r.id, {state: d.state, totals: d.totals, verdict: d.verdict}))
      .catch(() => {})));
}
