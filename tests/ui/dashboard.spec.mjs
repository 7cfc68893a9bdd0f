// dashboard.spec.mjs — the web dashboard in headless Chromium against a real
// master, worker and lc_target (started by tests/integration/test_dashboard.sh).
//
//   node dashboard.spec.mjs --probe   only checks that Chromium starts (exit 77 if not)
//   node dashboard.spec.mjs           the whole walk through the dashboard (then a journey
//                                     typed as YAML, a bad YAML, and a scripted run: a script
//                                     error and a failed check)
//
// Environment: UI_NODE_DIR (where npm ci put playwright-core), and for the walk
// LC_API (http://127.0.0.1:PORT), LC_TOKEN (an admin token), LC_TARGET (the
// target's URL), LC_WORKER (the worker's name), LC_ARTIFACTS (screenshots).
// Prints "ok: …" / "FAILED: …" per check and exits 1 when any failed.

import {createRequire} from 'node:module';
import {mkdirSync} from 'node:fs';
import path from 'node:path';

const SKIP = 77;
const env = process.env;
const require = createRequire(path.join(env.UI_NODE_DIR || '.', 'resolve-from-here.js'));

let chromium;
try {
  ({chromium} = require('playwright-core'));
} catch (err) {
  console.log(`SKIP: playwright-core is not installed in ${env.UI_NODE_DIR}: ${err.message}`);
  process.exit(SKIP);
}

let browser;
try {
  browser = await chromium.launch({
    executablePath: env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
    timeout: 30000,
  });
} catch (err) {
  console.log(`SKIP: Chromium cannot start: ${err.message.split('\n')[0]}`);
  process.exit(SKIP);
}
if (process.argv.includes('--probe')) {
  await browser.close();
  process.exit(0);
}

const API = env.LC_API, TOKEN = env.LC_TOKEN, TARGET = env.LC_TARGET, WORKER = env.LC_WORKER;
const ARTIFACTS = env.LC_ARTIFACTS;
mkdirSync(ARTIFACTS, {recursive: true});

let passed = 0, failed = 0;
function check(what, ok, detail = '') {
  if (ok) { passed++; console.log(`ok: ${what}`); }
  else { failed++; console.log(`FAILED: ${what}${detail ? ` (${detail})` : ''}`); }
}
// Runs one step; an exception fails it (with the message) and the walk goes on.
async function step(what, fn) {
  try {
    await fn();
  } catch (err) {
    check(what, false, err.message.split('\n')[0]);
  }
}

const context = await browser.newContext({viewport: {width: 1400, height: 1100}});
const page = await context.newPage();
page.setDefaultTimeout(10000);
const problems = [];
page.on('pageerror', err => problems.push(`page error: ${err.message}`));
page.on('console', msg => {
  if (msg.type() === 'error' && /Content Security Policy|Refused to/.test(msg.text()))
    problems.push(`console: ${msg.text()}`);
});

const scenario = (name, duration, extra = {}) => JSON.stringify({
  name, target: TARGET, duration, users: 10, spawn_rate: 2, think_time_ms: [5, 20],
  tasks: [{name: 'home', weight: 3, path: '/'}, {name: 'item', weight: 1, path: '/item/${rand(1,9)}'}],
  ...extra,
}, null, 2);

// Submits a scenario from the new-run page; returns the new run's id.
async function createRun(text) {
  await page.goto(`${API}/#/new`);
  await page.fill('#scenario', text);
  await page.click('#submit-run');
  await page.waitForURL(/#\/runs\/\d+$/);
  return page.url().match(/#\/runs\/(\d+)$/)[1];
}

const chartPoints = () => page.$$eval('#run-charts svg.chart', svgs =>
  svgs.map(s => ({points: Number(s.dataset.points), segments: [...s.querySelectorAll('path.chart-line')]
    .reduce((n, p) => n + (p.getAttribute('d').match(/L/g) || []).length, 0)})));

let run1 = null, run2 = null;
try {
  await step('login', async () => {
    await page.goto(`${API}/`);
    await page.waitForSelector('#token');
    check('an unauthenticated visit lands on the login page', page.url().includes('#/login'));
    await page.fill('#token', 'lct_not_a_real_token');
    await page.click('#login-submit');
    await page.waitForSelector('#login-error .error-box');
    check('a wrong token is refused on the login page',
      /token/i.test(await page.textContent('#login-error')));
    await page.fill('#token', TOKEN);
    await page.click('#login-submit');
    await page.waitForSelector('#runs-table');
    check('signed in: the run list shows', page.url().includes('#/runs'));
    const stored = await page.evaluate(() => ({
      session: sessionStorage.getItem('loadcluster.token'), local: localStorage.length,
      cookies: document.cookie}));
    check('the token is in sessionStorage only', stored.session === TOKEN && stored.local === 0 && stored.cookies === '');
    check('an admin sees the Tenants page in the menu', await page.isVisible('a[data-nav="tenants"]'));
  });

  await step('run page', async () => {
    run1 = await createRun(scenario('ui-live', '20s'));
    check('a run is created from the new-run page', Boolean(run1));
    await page.waitForSelector('#run-state [data-state], #run-state');
    await page.waitForFunction(() => document.querySelector('#run-state')?.dataset.state === 'running',
      null, {timeout: 15000});
    await page.waitForFunction(() => Number(document.querySelector('#run-charts svg.chart')?.dataset.points) >= 2,
      null, {timeout: 15000});
    const first = await chartPoints();
    // The charts take a point a second: wait (15 s at most) until the requests/s and users
    // charts both have more points than at first, rather than a fixed 3.5 s; the checks below
    // judge what is there then (a chart that does not grow fails them after the wait).
    await page.waitForFunction(([requests, users]) => {
      const svgs = document.querySelectorAll('#run-charts svg.chart');
      return svgs.length === 4 && Number(svgs[0].dataset.points) > requests + 1 &&
        Number(svgs[3].dataset.points) > users + 1;
    }, [first[0]?.points ?? 0, first[3]?.points ?? 0], {timeout: 15000, polling: 100}).catch(() => {});
    const second = await chartPoints();
    console.log(`chart points: ${JSON.stringify(first)} then ${JSON.stringify(second)}`);
    check('four charts on the run page', second.length === 4);
    check('the requests/s chart grows while the run runs',
      second[0].points > first[0].points && second[0].segments > first[0].segments);
    check('the users chart grows too', second[3].points > first[3].points);
    check('the latency chart has p50/p95/p99 lines (or p95 without history)',
      await page.$$eval('#run-charts figure:nth-child(3) path.chart-line', p => p.length) >= 1);
    check('the endpoint table lists the tasks',
      /home/.test(await page.textContent('#endpoints-table')) && /item/.test(await page.textContent('#endpoints-table')));
    const shot = path.join(ARTIFACTS, 'run-page.png');
    await page.screenshot({path: shot, fullPage: true});
    console.log(`screenshot: ${shot}`);

    await page.click('#stop-run');
    await page.click('#stop-confirm');
    await page.waitForFunction(() => ['aborted', 'stopped'].includes(document.querySelector('#run-state')?.dataset.state),
      null, {timeout: 20000});
    check('stop: the run page shows the run aborted',
      ['aborted', 'stopped'].includes(await page.$eval('#run-state', e => e.dataset.state)));
    check('the stop button is gone once the run is over', !(await page.isVisible('#stop-run')));
  });

  await step('HTML report', async () => {
    const [popup] = await Promise.all([context.waitForEvent('page'), page.click('#report-html')]);
    const refused = [];
    popup.on('console', msg => { if (/Content Security Policy/.test(msg.text())) refused.push(msg.text()); });
    await popup.waitForURL(/^blob:/, {timeout: 10000});
    await popup.waitForLoadState('load');
    await popup.screenshot({path: path.join(ARTIFACTS, 'report.png')});
    check('the report is shown with its own styles (no CSP refusal)', refused.length === 0, refused[0]);
    const text = await popup.textContent('body');
    check('the HTML report opens in a new tab with the run in it',
      text.includes('ui-live') || text.includes(`${run1}`), text.slice(0, 120));
    await popup.close();
  });

  await step('second run', async () => {
    run2 = await createRun(scenario('ui-short', '4s', {users: 5, spawn_rate: 5}));
    check('a second run is created', Boolean(run2) && run2 !== run1);
  });

  await step('workers page', async () => {
    await page.goto(`${API}/#/workers`);
    await page.waitForSelector('#workers-table .worker-name');
    const text = await page.textContent('#workers-table');
    check('the workers page lists the worker by name', text.includes(WORKER));
    check('the worker is shown connected with its capacity', /connected/.test(text) && /\d/.test(text));
  });

  await step('cluster page', async () => {
    await page.goto(`${API}/#/cluster`);
    await page.waitForSelector('#members-table');
    await page.waitForFunction(() => /#\d/.test(document.querySelector('#cluster-leader')?.textContent || ''));
    check('the cluster page shows the leader', (await page.textContent('#cluster-leader')) === '#1');
    check('the cluster page shows the term', Number(await page.textContent('#cluster-term')) >= 1);
    check('the members table lists master 1', /#1/.test(await page.textContent('#members-table')));
  });

  await step('tenants page', async () => {
    await page.goto(`${API}/#/tenants`);
    await page.waitForSelector('#tenants-table');
    check('the tenants page lists tenant "default"', /default/.test(await page.textContent('#tenants-table')));
    await page.waitForSelector('#tokens-table');
    check('the tokens table shows the admin token (never a secret)',
      /admin/.test(await page.textContent('#tokens-table')) && !(await page.textContent('#tokens-table')).includes(TOKEN));
    await page.fill('#tenant-name', 'ui-team');
    await page.fill('#tenant-weight', '3');
    await page.click('#add-tenant button[type=submit]');
    await page.waitForFunction(() => /ui-team/.test(document.querySelector('#tenants-table')?.textContent || ''));
    check('a tenant is added from the tenants page', true);
  });

  await step('invalid scenario', async () => {
    await page.goto(`${API}/#/new`);
    const bad = JSON.parse(scenario('ui-bad', '5s'));
    bad.tasks[1].method = 'FETCH';
    const text = JSON.stringify(bad, null, 2);
    await page.fill('#scenario', text);
    await page.click('#submit-run');
    await page.waitForSelector('#scenario-error .error-title');
    const title = await page.textContent('#scenario-error .error-title');
    const message = await page.textContent('#scenario-error .error-message');
    check('the error beside the editor names the JSON path', title === 'tasks[1].method', title);
    check('and says what was expected', /expected one of GET/.test(message), message);
    const line = text.split('\n').findIndex(l => l.includes('FETCH')) + 1;
    const marked = await page.$$eval('.gutter .err-line', els => els.map(e => Number(e.textContent)));
    check('the offending line is marked in the editor', marked.length === 1 && marked[0] === line,
      `marked ${marked} want ${line}`);
    check('the editor is flagged invalid', (await page.getAttribute('#scenario', 'aria-invalid')) === 'true');
    check('the page stayed on the new-run page', page.url().endsWith('#/new'));
  });

  await step('run list', async () => {
    await page.goto(`${API}/#/runs`);
    await page.waitForSelector(`#runs-table tr[data-run="${run1}"]`);
    check('the run list shows both runs', await page.isVisible(`#runs-table tr[data-run="${run2}"]`));
    check('no run was created by the invalid scenario', (await page.$$('#runs-table tbody tr[data-run]')).length === 2);
    await page.selectOption('#filter-state', 'aborted');
    await page.waitForFunction(r => !document.querySelector(`#runs-table tr[data-run="${r}"]`), run2);
    check('the state filter keeps only the aborted run',
      (await page.$$('#runs-table tbody tr[data-run]')).length === 1 && page.url().includes('state=aborted'));
    await page.selectOption('#filter-state', '');
    await page.selectOption('#filter-tenant', 'ui-team');
    await page.waitForSelector('#runs-table td.empty');
    check('the tenant filter asks the master (no run of ui-team)', page.url().includes('tenant=ui-team'));
    await page.selectOption('#filter-tenant', '');
    await page.waitForSelector(`#runs-table tr[data-run="${run1}"]`);
    await page.waitForFunction(r => /ms/.test(document.querySelector(`#runs-table tr[data-run="${r}"]`)?.textContent || ''), run1);
    check('the list shows a p95 for the stopped run', true);
  });

  await step('compare page', async () => {
    await page.goto(`${API}/#/runs/${run2}`);
    await page.waitForFunction(() => document.querySelector('#run-state')?.dataset.state === 'finished',
      null, {timeout: 20000});
    await page.goto(`${API}/#/compare?a=${run1}&b=${run2}`);
    await page.waitForSelector('#delta-table');
    const lines = await page.$$eval('#compare-charts svg.chart', svgs => svgs.map(s => s.querySelectorAll('path.chart-line').length));
    check('the compare page overlays both runs in each chart', lines.length === 4 && lines.every(n => n === 2),
      JSON.stringify(lines));
    const deltas = await page.textContent('#delta-table');
    check('the delta table compares requests/s and p95', /requests\/s/.test(deltas) && /p95/.test(deltas));
    check('the endpoint delta table lists the tasks', /home/.test(await page.textContent('#endpoint-delta-table')));
  });

  // A journey scenario typed as YAML: the master converts it and creates the run; its page
  // lists the journey and the group with their counts. A per-iteration feeder of 6 rows
  // that stops its user makes exactly 6 iterations, each through the group once.
  const api = async p => (await fetch(`${API}${p}`, {headers: {Authorization: `Bearer ${TOKEN}`}})).json();
  await step('YAML journey run', async () => {
    const yaml = [
      'name: ui-yaml', `target: ${TARGET}`, 'duration: 3s', 'users: 2', 'spawn_rate: 10',
      'feeders:', '  it:', '    csv: "n\\n1\\n2\\n3\\n4\\n5\\n6\\n"', '    mode: per_iteration',
      '    on_exhausted: stop_user',
      'journeys:', '  - name: ui-buyer', '    steps:',
      '      - name: ui-list', '        path: /ui-list', '      - group: ui-checkout', '        steps:',
      '          - name: ui-pay', '            method: POST', '            path: /ui-pay/${it.n}',
      '          - think_ms: 10', ''].join('\n');
    const run4 = await createRun(yaml);
    check('a YAML scenario creates a run', Boolean(run4) && ![run1, run2].includes(run4));
    await page.waitForFunction(() => document.querySelector('#run-state')?.dataset.state === 'finished',
      null, {timeout: 20000});
    await page.waitForSelector('#journeys-table');
    const rows = await page.$$eval('#journeys-table tbody tr', trs => trs.map(tr => [...tr.cells].map(td => td.textContent)));
    const view = await api(`/api/v1/runs/${run4}`);
    const count = name => view.endpoints.find(e => e.name === name)?.requests;
    const served = (await (await fetch(`${TARGET}/__stats`)).json()).by_path;
    const pays = Object.entries(served).filter(([k]) => k.startsWith('/ui-pay/')).map(([, v]) => v);
    console.log(`journeys table: ${JSON.stringify(rows)}; target: ${JSON.stringify(pays)}`);
    const row = (name, kind) => rows.find(r => r[0] === name && r[1] === kind);
    check('the journeys table shows the journey with its 6 iterations, as the API counts them',
      row('ui-buyer', 'iteration')?.[2] === '6' && count('iteration:ui-buyer') === 6, JSON.stringify(rows));
    check('and the group with its 6 runs, as the API counts them',
      row('ui-checkout', 'group')?.[2] === '6' && count('group:ui-checkout') === 6, JSON.stringify(rows));
    check('only those two rows', rows.length === 2, JSON.stringify(rows));
    check('lc_target saw each of the 6 rows paid once', pays.length === 6 && pays.every(v => v === 1),
      JSON.stringify(pays));
    check('the endpoints table has the steps, not the series',
      /ui-pay/.test(await page.textContent('#endpoints-table')) &&
      !/ITERATION|GROUP/.test(await page.textContent('#endpoints-table')));
  });

  // Bad YAML: a duplicate key. The master's error names its line, which the editor marks;
  // nothing is created.
  await step('YAML error', async () => {
    const before = (await api('/api/v1/runs')).runs.length;
    const lines = ['name: ui-yaml-bad', `target: ${TARGET}`, 'duration: 3s', 'users: 2',
      'tasks:', '  - name: home', '    path: /', 'users: 3', ''];
    await page.goto(`${API}/#/new`);
    await page.fill('#scenario', lines.join('\n'));
    await page.click('#submit-run');
    await page.waitForSelector('#scenario-error .error-message');
    const message = await page.textContent('#scenario-error .error-message');
    check('a bad YAML scenario shows the master\'s error with its line and column',
      message === 'scenario: duplicate key "users" (line 8, column 1)', message);
    const marked = await page.$$eval('.gutter .err-line', els => els.map(e => Number(e.textContent)));
    check('the YAML error\'s line is marked in the editor', marked.length === 1 && marked[0] === 8, `marked ${marked}`);
    check('and offered as a link', (await page.textContent('#show-error-line')) === 'line 8: show it');
    check('the page stayed on the new-run page and created no run',
      page.url().endsWith('#/new') && (await api('/api/v1/runs')).runs.length === before);
  });

  // A scripted run whose check always fails and whose function then errs: the run page
  // shows the error's first message (the script's line) and the checks table.
  await step('script errors and checks', async () => {
    const script = 'function f(u)\n  local r = http.get("/", {name = "home"})\n' +
      '  check(r.status == 201, "created")\n  local missing = nil\n  return missing.field\nend\n';
    const run3 = await createRun(JSON.stringify({
      name: 'ui-script', target: TARGET, duration: '3s', users: 2, spawn_rate: 10, think_time_ms: 100,
      script, journeys: [{name: 'j', steps: [{lua: 'f', endpoints: ['home']}]}],
    }, null, 2));
    check('a scripted run is created', Boolean(run3) && run3 !== run1 && run3 !== run2);
    await page.waitForFunction(() => document.querySelector('#run-state')?.dataset.state === 'finished',
      null, {timeout: 20000});
    const rows = sel => page.$$eval(`${sel} tbody tr`, trs => trs.map(tr => [...tr.cells].map(td => td.textContent)));
    await page.waitForFunction(() => /lua f/.test(document.querySelector('#errors-table')?.textContent || ''),
      null, {timeout: 10000});
    const errors = await rows('#errors-table');
    const script5 = errors.find(r => r[0] === 'lua f' && r[1] === 'script');
    check('the errors table shows the script error\'s first message with its step and line',
      Boolean(script5) && Number(script5[2].replace(/,/g, '')) > 0 &&
      script5[3] === "journeys[0].steps[0]: script:5: attempt to index local 'missing' (a nil value)",
      JSON.stringify(script5 || errors));
    const failedCheck = errors.find(r => r[0] === 'lua f' && r[1] === 'check');
    check('and the failed check\'s, naming it', Boolean(failedCheck) &&
      /check "created" failed/.test(failedCheck[3]), JSON.stringify(failedCheck || errors));
    await page.waitForSelector('#checks-table');
    const checks = await rows('#checks-table');
    const created = checks.find(r => r[0] === 'created');
    check('the checks table counts the check by name: none passed, some failed',
      Boolean(created) && created[1] === '0' && Number(created[2].replace(/,/g, '')) > 0,
      JSON.stringify(checks));
  });

  await step('sign out and 401', async () => {
    await page.click('#signout');
    await page.waitForSelector('#token');
    check('sign out forgets the token',
      (await page.evaluate(() => sessionStorage.getItem('loadcluster.token'))) === null);
    await page.evaluate(() => sessionStorage.setItem('loadcluster.token', 'lct_revoked_or_wrong'));
    await page.goto(`${API}/#/workers`);
    await page.waitForSelector('#token');
    check('a 401 from the API goes back to the login page', page.url().includes('#/login'));
  });

  check('no script errors or CSP violations in the page', problems.length === 0, problems.join('; '));
} catch (err) {
  check('the walk through the dashboard', false, err.message);
} finally {
  if (failed > 0)
    await page.screenshot({path: path.join(ARTIFACTS, 'failure.png'), fullPage: true}).catch(() => {});
  await browser.close();
}
console.log(`ui: ${passed} checks passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
