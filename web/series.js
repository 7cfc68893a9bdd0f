// series.js — a run's per-second history, kept up to date while it runs.
//
// GET /api/v1/runs/{id}/history[?since=T]&limit=N gives a run's seconds a
// page at a time ("more": ask again from the page's last t). A
// master without that endpoint (404) still gets live charts: the series is
// then built from the run view's "current" (the latest complete second) on
// every poll, which has no p50/p99 and starts when the page was opened.

import {ApiError, getJson, runPath} from './api.js';

// A page is an hour of seconds; a poll reads at most a day of them (a long
// run's older history arrives over the next polls).
const PAGE = 3600;
const MAX_PAGES = 24;

export class RunSeries {
  constructor(id) {
    this.id = id;
    this.seconds = new Map(); // t → {t, users, requests, failures, rps, failures_per_s, p50_ms, p95_ms, p99_ms}
    this.fromHistory = true;
    this.t0 = null;
  }

  // Brings the series up to date; run is the run view just fetched.
  async update(run) {
    if (this.fromHistory) {
      try {
        // Ask again for the last seconds seen: the newest may have been partial.
        const last = this.lastT();
        let since = last === null ? null : last - 2;
        for (let page = 0; page < MAX_PAGES; page++) {
          const q = since === null ? `?limit=${PAGE}` : `?since=${since}&limit=${PAGE}`;
          const h = await getJson(`${runPath(this.id)}/history${q}`);
          const seconds = h.seconds || [];
          for (const s of seconds) this.seconds.set(s.t, s);
          if (!h.more || seconds.length === 0) break;
          since = seconds[seconds.length - 1].t;
        }
      } catch (err) {
        if (!(err instanceof ApiError) || err.status !== 404 || this.seconds.size > 0) throw err;
        this.fromHistory = false;
      }
    }
    if (!this.fromHistory && run.current && typeof run.current.t === 'number') {
      const c = run.current;
      this.seconds.set(c.t, {t: c.t, users: c.users, requests: c.rps, failures: c.failures,
        rps: c.rps, failures_per_s: c.failures, p95_ms: c.p95_ms});
    }
    if (this.t0 === null && this.seconds.size > 0) this.t0 = this.origin(run);
  }

  lastT() {
    let last = null;
    for (const t of this.seconds.keys()) if (last === null || t > last) last = t;
    return last;
  }

  // History seconds are Unix times: measure from the run's start. The
  // fallback's "t" already counts seconds from the start.
  origin(run) {
    const first = Math.min(...this.seconds.keys());
    if (first < 1e9) return 0;
    const started = run.started_at ? Math.floor(Date.parse(run.started_at) / 1000) : NaN;
    return Number.isFinite(started) && started <= first ? started : first;
  }

  // [[seconds since start, value], …] of one field, in time order; the
  // history's own offset_s when it has one.
  points(field) {
    const t0 = this.t0 ?? 0;
    return [...this.seconds.values()]
      .filter(s => typeof s[field] === 'number')
      .sort((a, b) => a.t - b.t)
      .map(s => [typeof s.offset_s === 'number' ? s.offset_s : s.t - t0, s[field]]);
  }

  has(field) {
    for (const s of this.seconds.values()) if (typeof s[field] === 'number') return true;
    return false;
  }
}
