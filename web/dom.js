// dom.js — building elements and formatting numbers. Text always goes in
// through textContent, never innerHTML: run names, endpoints and error
// messages come from users and must not become markup.

// h('div.card#x', {onclick: fn, title: 't'}, child, 'text', [more]) → element.
export function h(tag, attrs, ...children) {
  const [name, ...rest] = tag.split(/(?=[.#])/);
  const el = document.createElement(name || 'div');
  for (const part of rest) {
    if (part[0] === '.') el.classList.add(part.slice(1));
    else el.id = part.slice(1);
  }
  if (attrs && (typeof attrs !== 'object' || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key in el && typeof value !== 'string') el[key] = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// Replaces the children of el.
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// A table: columns [{label, cell: row => value|Node, num: bool}], rows.
export function table(columns, rows, opts = {}) {
  const head = h('tr', columns.map(c => h(c.num ? 'th.num' : 'th', c.label)));
  const body = rows.map(row => h('tr', opts.rowAttrs ? opts.rowAttrs(row) : null,
    columns.map(c => h(c.num ? 'td.num' : 'td', c.cell(row)))));
  if (rows.length === 0)
    body.push(h('tr', h('td.empty', {colspan: columns.length}, opts.empty || 'nothing yet')));
  return h('table.grid', opts.attrs || null, h('thead', head), h('tbody', body));
}

export function tile(label, value, extra) {
  return h('div.tile', h('div.tile-label', label), h('div.tile-value', value),
    extra ? h('div.tile-extra', extra) : null);
}

export function badge(text, kind) {
  return h(`span.badge.badge-${kind || text || 'none'}`, text || '—');
}

const intFmt = new Intl.NumberFormat('en-US', {maximumFractionDigits: 0});

export function fmtInt(n) {
  return n === null || n === undefined || Number.isNaN(n) ? '—' : intFmt.format(n);
}

// Rates and other quantities: 3 significant digits below 100, whole above.
export function fmtNum(n) {
  if (n === null || n === undefined || Number.isNaN(n)) return '—';
  const a = Math.abs(n);
  if (a >= 100 || a === 0) return intFmt.format(n);
  return Number(n.toPrecision(3)).toString();
}

export function fmtMs(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '—';
  if (ms >= 10000) return `${fmtNum(ms / 1000)} s`;
  return `${fmtNum(ms)} ms`;
}

export function fmtPct(x) {
  if (x === null || x === undefined || Number.isNaN(x)) return '—';
  return `${fmtNum(x * 100)} %`;
}

export function fmtBytes(b) {
  if (b === null || b === undefined) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (b >= 1024 && i < units.length - 1) { b /= 1024; i++; }
  return `${fmtNum(b)} ${units[i]}`;
}

export function fmtDuration(seconds) {
  if (seconds === null || seconds === undefined || Number.isNaN(seconds)) return '—';
  let s = Math.round(seconds);
  const hours = Math.floor(s / 3600); s -= hours * 3600;
  const mins = Math.floor(s / 60); s -= mins * 60;
  if (hours) return `${hours}h${String(mins).padStart(2, '0')}m${String(s).padStart(2, '0')}s`;
  if (mins) return `${mins}m${String(s).padStart(2, '0')}s`;
  return `${s}s`;
}

export function fmtTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const today = new Date().toDateString() === d.toDateString();
  return today ? d.toLocaleTimeString() : d.toLocaleString();
}

// Seconds a run has lasted: its own duration_s, else from its timestamps.
export function runSeconds(run) {
  if (typeof run.duration_s === 'number') return run.duration_s;
  if (!run.started_at) return 0;
  const end = run.finished_at ? Date.parse(run.finished_at) : Date.now();
  return Math.max(0, (end - Date.parse(run.started_at)) / 1000);
}

export const ACTIVE_STATES = ['pending', 'running', 'stopping'];
export const RUN_STATES = ['pending', 'running', 'stopping', 'finished', 'aborted', 'failed'];

export function isActive(run) {
  return ACTIVE_STATES.includes(run.state);
}

// The hash route's query: "#/runs?tenant=a&state=b" → URLSearchParams.
export function hashQuery() {
  const i = location.hash.indexOf('?');
  return new URLSearchParams(i < 0 ? '' : location.hash.slice(i + 1));
}

export function setHashQuery(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const text = q.toString();
  history.replaceState(null, '', `#${path}${text ? '?' + text : ''}`);
}

// A message block for a page that could not load.
export function errorBox(err) {
  return h('div.error-box', {role: 'alert'}, err && err.message ? err.message : String(err));
}
