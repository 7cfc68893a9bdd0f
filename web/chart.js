// chart.js — small SVG line charts: axes with ticks, a legend, several series.
//
// Hand-written rather than a charting library on purpose: the product ships
// as one loadmaster binary with these files embedded, and a library would
// add a build-time npm dependency (and a bundler) to a C project for what is
// a handful of line charts of at most a few thousand points each.

const SVG = 'http://www.w3.org/2000/svg';
export const PALETTE = ['#2563eb', '#ea580c', '#16a34a', '#9333ea', '#dc2626', '#0891b2'];

const W = 560, H = 220;
const PAD = {left: 54, right: 12, top: 16, bottom: 30};

function el(name, attrs, text) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

// About `count` round tick values covering [lo, hi] (1, 2, 5 × 10^n steps).
export function niceTicks(lo, hi, count = 5) {
  if (!(hi > lo)) hi = lo + 1;
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map(m => m * mag).find(s => s >= raw);
  const ticks = [];
  for (let v = Math.floor(lo / step) * step; v <= hi + step * 1e-9; v += step)
    ticks.push(Number(v.toPrecision(12)));
  if (ticks[ticks.length - 1] < hi) ticks.push(Number((ticks[ticks.length - 1] + step).toPrecision(12)));
  return ticks;
}

// Ticks for seconds: steps of 1, 2, 5, 10, 15, 30 s, then whole minutes and hours.
const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 21600, 43200, 86400];

export function timeTicks(lo, hi, count = 6) {
  if (hi - lo < 5) return niceTicks(lo, hi, count);
  const step = TIME_STEPS.find(st => (hi - lo) / st <= count) || 86400;
  const ticks = [];
  for (let v = Math.floor(lo / step) * step; v < hi + step; v += step) {
    ticks.push(v);
    if (v >= hi) break;
  }
  return ticks;
}

function shortNum(v) {
  const a = Math.abs(v);
  if (a >= 1e9) return `${Number((v / 1e9).toPrecision(3))}G`;
  if (a >= 1e6) return `${Number((v / 1e6).toPrecision(3))}M`;
  if (a >= 1e4) return `${Number((v / 1e3).toPrecision(3))}k`;
  if (a >= 1 || a === 0) return String(Number(v.toPrecision(4)));
  return String(Number(v.toPrecision(2)));
}

function fmtSeconds(s) {
  if (s >= 3600 && s % 60 === 0) return `${Math.floor(s / 3600)}h${String((s % 3600) / 60).padStart(2, '0')}`;
  if (s >= 120 && Number.isInteger(s)) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}`;
  return `${Number(s.toPrecision(4))}s`;
}

// lineChart({title, unit, series: [{name, color?, points: [[x, y], …]}]})
// → a <figure> holding the SVG. x is seconds since the run started; y ≥ 0.
// The SVG carries data-points (all points drawn), and each line data-count.
export function lineChart({title, unit = '', series}) {
  const all = series.flatMap(s => s.points);
  const xs = all.map(p => p[0]), ys = all.map(p => p[1]).filter(y => Number.isFinite(y));
  const xMax = xs.length ? Math.max(...xs, 1) : 10;
  const xMin = xs.length ? Math.min(...xs, 0) : 0;
  const yTicks = niceTicks(0, ys.length ? Math.max(...ys) : 1, 4);
  const xTicks = timeTicks(xMin, xMax, 6);
  const yTop = yTicks[yTicks.length - 1];
  const xLo = xTicks[0], xHi = xTicks[xTicks.length - 1];
  const px = x => PAD.left + ((x - xLo) / (xHi - xLo || 1)) * (W - PAD.left - PAD.right);
  const py = y => H - PAD.bottom - (y / (yTop || 1)) * (H - PAD.top - PAD.bottom);

  const svg = el('svg', {viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img',
    'aria-label': title, 'data-points': all.length});
  const grid = el('g', {class: 'chart-grid'});
  for (const t of yTicks) {
    grid.append(el('line', {x1: PAD.left, x2: W - PAD.right, y1: py(t), y2: py(t)}));
    grid.append(el('text', {x: PAD.left - 6, y: py(t) + 4, 'text-anchor': 'end'}, shortNum(t)));
  }
  for (const t of xTicks) {
    grid.append(el('line', {x1: px(t), x2: px(t), y1: PAD.top, y2: H - PAD.bottom, class: 'x'}));
    grid.append(el('text', {x: px(t), y: H - PAD.bottom + 16, 'text-anchor': 'middle'}, fmtSeconds(t)));
  }
  svg.append(grid);
  svg.append(el('line', {x1: PAD.left, x2: PAD.left, y1: PAD.top, y2: H - PAD.bottom, class: 'chart-axis'}));
  svg.append(el('line', {x1: PAD.left, x2: W - PAD.right, y1: H - PAD.bottom, y2: H - PAD.bottom, class: 'chart-axis'}));
  if (unit)
    svg.append(el('text', {x: PAD.left + 4, y: PAD.top - 2, class: 'chart-unit'}, unit));

  series.forEach((s, i) => {
    const color = s.color || PALETTE[i % PALETTE.length];
    const pts = s.points.filter(p => Number.isFinite(p[1]));
    if (pts.length === 0) return;
    const d = pts.map((p, j) => `${j ? 'L' : 'M'}${px(p[0]).toFixed(1)},${py(p[1]).toFixed(1)}`).join('');
    svg.append(el('path', {d, class: 'chart-line', stroke: color, 'data-series': s.name,
      'data-count': pts.length, ...(s.dashed ? {'stroke-dasharray': '5 3'} : {})}));
    if (pts.length === 1)
      svg.append(el('circle', {cx: px(pts[0][0]), cy: py(pts[0][1]), r: 3, fill: color}));
  });
  if (all.length === 0)
    svg.append(el('text', {x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'chart-empty'},
      'waiting for data'));
  addHover(svg, series, px, unit);

  const legend = document.createElement('div');
  legend.className = 'chart-legend';
  series.forEach((s, i) => {
    const item = document.createElement('span');
    item.className = 'legend-item';
    const swatch = el('svg', {width: 18, height: 10, class: 'legend-swatch'});
    swatch.append(el('line', {x1: 0, x2: 18, y1: 5, y2: 5, stroke: s.color || PALETTE[i % PALETTE.length],
      'stroke-width': 3, ...(s.dashed ? {'stroke-dasharray': '5 3'} : {})}));
    item.append(swatch, document.createTextNode(s.name));
    legend.append(item);
  });

  const fig = document.createElement('figure');
  fig.className = 'chart-box';
  const cap = document.createElement('figcaption');
  cap.textContent = title;
  fig.append(cap, svg, legend);
  return fig;
}

// A vertical rule and a readout of every series at the x under the pointer.
function addHover(svg, series, px, unit) {
  const rule = el('line', {y1: PAD.top, y2: H - PAD.bottom, class: 'chart-rule', visibility: 'hidden'});
  const box = el('g', {class: 'chart-readout', visibility: 'hidden'});
  const bg = el('rect', {rx: 3, ry: 3});
  box.append(bg);
  svg.append(rule, box);
  svg.addEventListener('mouseleave', () => {
    rule.setAttribute('visibility', 'hidden');
    box.setAttribute('visibility', 'hidden');
  });
  svg.addEventListener('mousemove', ev => {
    const r = svg.getBoundingClientRect();
    const x = ((ev.clientX - r.left) / r.width) * W;
    let best = null;
    for (const s of series)
      for (const p of s.points)
        if (best === null || Math.abs(px(p[0]) - x) < Math.abs(px(best) - x)) best = p[0];
    if (best === null) return;
    const lines = [fmtSeconds(best)];
    for (const s of series) {
      const p = s.points.find(q => q[0] === best);
      if (p) lines.push(`${s.name}: ${shortNum(p[1])}${unit ? ' ' + unit : ''}`);
    }
    rule.setAttribute('x1', px(best));
    rule.setAttribute('x2', px(best));
    rule.setAttribute('visibility', 'visible');
    box.querySelectorAll('text').forEach(t => t.remove());
    const left = px(best) > W / 2;
    lines.forEach((t, i) => box.append(el('text', {x: 0, y: 14 + i * 14}, t)));
    const width = 12 + 6.5 * Math.max(...lines.map(t => t.length));
    const bx = left ? px(best) - width - 6 : px(best) + 6;
    box.setAttribute('transform', `translate(${bx},${PAD.top})`);
    box.querySelectorAll('text').forEach(t => t.setAttribute('x', 6));
    bg.setAttribute('width', width);
    bg.setAttribute('height', 8 + lines.length * 14);
    box.setAttribute('visibility', 'visible');
  });
}
