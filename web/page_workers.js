// page_workers.js — the fleet: each worker's state, capacity, CPU, memory and
// the users it runs for each run, refreshed every two seconds.

import {getJson} from './api.js';
import {badge, errorBox, fill, fmtBytes, fmtInt, fmtNum, h, table, tile} from './dom.js';

export function render(main) {
  const tiles = h('section.tiles');
  const list = h('div#workers-list');
  fill(main, h('h1', 'Workers'), tiles, list);
  let timer = null, closed = false;

  async function refresh() {
    try {
      const workers = (await getJson('/api/v1/workers')).workers || [];
      draw(workers);
    } catch (err) {
      fill(list, errorBox(err));
    }
    if (!closed) timer = setTimeout(refresh, 2000);
  }

  function draw(workers) {
    const live = workers.filter(w => w.connected);
    const users = live.reduce((n, w) => n + (w.runs || []).reduce((m, r) => m + (r.users || 0), 0), 0);
    const capacity = live.reduce((n, w) => n + (w.effective_capacity ?? w.capacity ?? 0), 0);
    fill(tiles,
      tile('connected', fmtInt(live.length), `${fmtInt(workers.length - live.length)} disconnected`),
      tile('capacity', fmtInt(capacity), 'users, effective'),
      tile('users assigned', fmtInt(users), capacity ? `${fmtNum((100 * users) / capacity)} % of capacity` : null),
      tile('saturated', fmtInt(workers.filter(w => w.saturated).length), 'above 90 % CPU'));
    fill(list, table([
      {label: 'name', cell: w => h('span.worker-name', w.name)},
      {label: 'state', cell: w => stateOf(w)},
      {label: 'address', cell: w => w.address},
      {label: 'threads', num: true, cell: w => fmtInt(w.threads)},
      {label: 'capacity', num: true, cell: w => capacityOf(w)},
      {label: 'CPU', cell: w => cpuBar(w.cpu_percent)},
      {label: 'memory', num: true, cell: w => fmtBytes(w.rss_bytes)},
      {label: 'last seen', num: true, cell: w => `${fmtNum((w.last_seen_ms_ago || 0) / 1000)} s ago`},
      {label: 'users per run', cell: w => runsOf(w)},
      {label: 'id', cell: w => h('code.muted', {title: w.id}, String(w.id).slice(0, 8))},
    ], workers, {empty: 'no worker has joined: start one with loadworker --join HOST:5557',
      attrs: {id: 'workers-table'}}));
  }

  refresh();
  return () => { closed = true; clearTimeout(timer); };
}

function stateOf(w) {
  if (!w.connected) return badge('disconnected', 'failed');
  if (w.saturated) return badge('saturated', 'stopping');
  return badge('connected', 'running');
}

function capacityOf(w) {
  if (w.effective_capacity !== undefined && w.effective_capacity !== w.capacity)
    return `${fmtInt(w.effective_capacity)} of ${fmtInt(w.capacity)}`;
  return fmtInt(w.capacity);
}

function cpuBar(pct) {
  const v = Math.max(0, Math.min(100, pct || 0));
  const meter = h('meter', {min: 0, max: 100, low: 70, high: 90, optimum: 0, value: v});
  return h('span.cpu', meter, ` ${fmtNum(pct || 0)} %`);
}

function runsOf(w) {
  const runs = w.runs || [];
  if (runs.length === 0) return h('span.muted', 'idle');
  return h('ul.plain', runs.map(r => h('li', h('a', {href: `#/runs/${r.run}`}, `run ${r.run}`),
    `: ${fmtInt(r.users)} users`,
    r.running_users !== undefined && r.running_users !== r.users ? ` (${fmtInt(r.running_users)} running)` : '',
    r.connections !== undefined ? `, ${fmtInt(r.connections)} conns` : '')));
}
