// app.js — the dashboard's entry point: hash routes to pages, sign-in and
// sign-out, the navigation bar. Each page module exports
// render(main, params, app) and may return a function that stops its timers.
//
// Routes:
//   #/login            paste an API token
//   #/runs[?tenant=&state=]   the run list
//   #/new              a new run from a scenario
//   #/runs/ID          one run, live while it runs
//   #/compare[?a=&b=]  two runs overlaid
//   #/workers  #/cluster  #/tenants (admin)

import {getJson, isAdmin, setUnauthorizedHandler, signOut, token} from './api.js';
import {fill, h} from './dom.js';
import * as compare from './page_compare.js';
import * as cluster from './page_cluster.js';
import * as login from './page_login.js';
import * as newRun from './page_new.js';
import * as run from './page_run.js';
import * as runs from './page_runs.js';
import * as tenants from './page_tenants.js';
import * as workers from './page_workers.js';

const routes = [
  {re: /^\/login$/, page: login, nav: null, open: true},
  {re: /^\/runs\/(\d+)$/, page: run, nav: 'runs', params: m => ({id: m[1]})},
  {re: /^\/runs$/, page: runs, nav: 'runs'},
  {re: /^\/new$/, page: newRun, nav: 'new'},
  {re: /^\/compare$/, page: compare, nav: 'compare'},
  {re: /^\/workers$/, page: workers, nav: 'workers'},
  {re: /^\/cluster$/, page: cluster, nav: 'cluster'},
  {re: /^\/tenants$/, page: tenants, nav: 'tenants'},
];

const main = document.getElementById('main');
const nav = document.getElementById('nav');
let cleanup = null;
let wanted = '#/runs'; // where to go after signing in

function route() {
  const hash = location.hash || '#/runs';
  const path = hash.slice(1).split('?')[0];
  const r = routes.find(x => x.re.test(path));
  if (typeof cleanup === 'function') cleanup();
  cleanup = null;
  if (!r) {
    fill(main, h('h1', 'Not found'), h('p', 'No page at ', h('code', hash), '. ', h('a', {href: '#/runs'}, 'Runs')));
    return;
  }
  if (!r.open && !token()) {
    wanted = hash;
    location.replace('#/login');
    return;
  }
  if (r.page === login && token()) {
    location.replace(wanted);
    return;
  }
  drawChrome(r.nav);
  main.replaceChildren();
  const params = r.params ? r.params(r.re.exec(path)) : {};
  cleanup = r.page.render(main, params, {onSignedIn});
  window.scrollTo(0, 0);
}

function drawChrome(current) {
  const signedIn = Boolean(token());
  nav.hidden = !signedIn;
  document.getElementById('signout').hidden = !signedIn;
  for (const a of nav.querySelectorAll('a')) {
    a.classList.toggle('active', a.dataset.nav === current);
    if ('admin' in a.dataset) a.hidden = !isAdmin();
  }
  if (signedIn) showRole();
}

// Which master this is (leader or follower), in the top bar.
async function showRole() {
  const el = document.getElementById('node-role');
  try {
    const c = await getJson('/api/v1/cluster');
    el.textContent = `master #${c.id} · ${c.role}`;
  } catch (err) {
    el.textContent = '';
  }
}

function onSignedIn() {
  const to = wanted && !wanted.startsWith('#/login') ? wanted : '#/runs';
  wanted = '#/runs';
  location.hash = to;
}

function goToLogin() {
  signOut();
  if (!location.hash.startsWith('#/login')) wanted = location.hash || '#/runs';
  document.getElementById('node-role').textContent = '';
  location.hash = '#/login';
}

setUnauthorizedHandler(goToLogin);
document.getElementById('signout').addEventListener('click', () => {
  wanted = '#/runs';
  goToLogin();
});
window.addEventListener('hashchange', route);
route();
