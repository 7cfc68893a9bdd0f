// page_new.js — a new run: paste or upload a scenario (JSON or YAML), submit
// it; the master's validation error names a JSON path (and for YAML the line
// and column), shown beside the editor with the offending line marked.

import {postJson} from './api.js';
import {fill, h} from './dom.js';
import {errorPath, lineOf, locate, offsetOf, syntaxErrorAt} from './jsonpath.js';

const DRAFT_KEY = 'loadcluster.draft';

// Text that does not start with '{' is YAML: the master converts it to JSON.
const isYaml = text => !/^\s*\{/.test(text);

const EXAMPLE = `{
  "name": "smoke",
  "target": "http://127.0.0.1:8080",
  "duration": "1m",
  "users": 20,
  "spawn_rate": 5,
  "think_time_ms": [50, 150],
  "tasks": [
    {"name": "home", "weight": 3, "method": "GET", "path": "/"},
    {"name": "search", "weight": 1, "method": "GET", "path": "/search?q=\${rand(1,100)}"}
  ],
  "thresholds": {"p95_ms": 250, "error_rate": 0.01}
}
`;

export function render(main) {
  const editor = h('textarea#scenario', {spellcheck: 'false', autocomplete: 'off', wrap: 'off',
    'aria-describedby': 'scenario-error', 'aria-label': 'scenario, JSON or YAML', rows: 24});
  editor.value = sessionStorage.getItem(DRAFT_KEY) ?? EXAMPLE;
  const gutter = h('div.gutter', {'aria-hidden': 'true'});
  const errBox = h('aside.field-error#scenario-error', {'aria-live': 'polite'});
  const submit = h('button.primary#submit-run', {type: 'submit'}, 'Start run');
  const file = h('input#scenario-file', {type: 'file', accept: '.json,.yaml,.yml,application/json,application/yaml', onchange: async () => {
    const f = file.files[0];
    if (!f) return;
    editor.value = await f.text();
    file.value = '';
    edited();
  }});
  let errorLine = 0, checkTimer = null;

  const form = h('form.new-run', {onsubmit: ev => { ev.preventDefault(); send(); }},
    h('div.editor-row',
      h('div.editor',
        h('label', {for: 'scenario'}, 'Scenario (JSON or YAML)'),
        h('div.editor-box', gutter, editor),
        h('div.editor-actions',
          h('label.file-pick', 'Upload a file… ', file),
          h('button', {type: 'button', onclick: () => { editor.value = EXAMPLE; edited(); }}, 'Example'),
          h('button', {type: 'button', onclick: format}, 'Format'),
          h('span.spacer'), submit)),
      errBox));
  fill(main, h('h1', 'New run'),
    h('p.muted', 'Paste a scenario or upload one; the format is in the README ("Scenario format"). ',
      'Without "tenant" the run belongs to your token\'s tenant (or "default").'),
    form);

  editor.addEventListener('input', edited);
  editor.addEventListener('scroll', () => { gutter.scrollTop = editor.scrollTop; });
  drawGutter();
  showHint();

  function edited() {
    sessionStorage.setItem(DRAFT_KEY, editor.value);
    errorLine = 0;
    drawGutter();
    clearTimeout(checkTimer);
    checkTimer = setTimeout(() => syntaxCheck(false), 400);
  }

  function drawGutter() {
    const lines = editor.value.split('\n').length;
    const rows = [];
    for (let i = 1; i <= lines; i++)
      rows.push(h(i === errorLine ? 'div.err-line' : 'div', String(i)));
    fill(gutter, rows);
    gutter.scrollTop = editor.scrollTop;
  }

  function showHint() {
    editor.classList.remove('invalid');
    editor.removeAttribute('aria-invalid');
    fill(errBox, h('p.muted', 'Problems with the scenario are shown here, next to the line they concern.'));
  }

  // Marks the error: the panel names the path and the message; the editor's
  // line is marked and selected on request.
  function showError(title, message, span) {
    editor.classList.add('invalid');
    editor.setAttribute('aria-invalid', 'true');
    errorLine = span ? lineOf(editor.value, span.start) : 0;
    drawGutter();
    fill(errBox,
      h('div.error-title', title),
      h('p.error-message', message),
      span ? h('button.link#show-error-line', {type: 'button', onclick: () => select(span)},
        `line ${errorLine}: show it`) : null);
    if (span) select(span, false);
  }

  function select(span, focus = true) {
    if (focus) editor.focus();
    editor.setSelectionRange(span.start, span.end);
    const lineHeight = editor.scrollHeight / Math.max(1, editor.value.split('\n').length);
    editor.scrollTop = Math.max(0, (lineOf(editor.value, span.start) - 4) * lineHeight);
  }

  // A JSON syntax error, checked here before anything is sent (YAML is
  // checked by the master).
  function syntaxCheck(report) {
    if (isYaml(editor.value)) {
      if (errBox.dataset.kind === 'syntax') showHint();
      return true;
    }
    try {
      JSON.parse(editor.value);
      if (!report && editor.classList.contains('invalid') && errBox.dataset.kind === 'syntax') showHint();
      return true;
    } catch (err) {
      if (report || editor.value.trim() !== '') {
        const m = /position (\d+)/.exec(err.message);
        const lc = /line (\d+) column (\d+)/.exec(err.message);
        const at = m ? Number(m[1]) : lc ? offsetOf(editor.value, Number(lc[1]), Number(lc[2]))
          : syntaxErrorAt(editor.value);
        errBox.dataset.kind = 'syntax';
        showError('JSON syntax', err.message, at === null ? null : {start: at, end: Math.min(at + 1, editor.value.length)});
      }
      return false;
    }
  }

  function format() {
    if (isYaml(editor.value)) return; // JSON only: YAML is kept as written
    try {
      editor.value = JSON.stringify(JSON.parse(editor.value), null, 2) + '\n';
      edited();
    } catch (err) {
      syntaxCheck(true);
    }
  }

  async function send() {
    clearTimeout(checkTimer);
    if (!syntaxCheck(true)) return;
    submit.disabled = true;
    try {
      const text = editor.value;
      const res = await postJson('/api/v1/runs', text, isYaml(text) ? 'application/yaml' : undefined);
      sessionStorage.removeItem(DRAFT_KEY);
      location.hash = `#/runs/${res.id}`;
    } catch (err) {
      errBox.dataset.kind = 'server';
      const message = err.message;
      const path = errorPath(message);
      const lc = /line (\d+),? column (\d+)/.exec(message);
      let span = null;
      if (lc) {
        const at = offsetOf(editor.value, Number(lc[1]), Number(lc[2]));
        span = {start: at, end: Math.min(at + 1, editor.value.length)};
      } else if (path && path !== 'scenario') {
        span = locate(editor.value, path);
        if (span && span.start === 0 && span.end >= editor.value.trim().length) span = null;
      }
      // The path as the title when it points into the text; a field that is
      // missing (or an error of the whole request) is named by the message.
      const title = span && path && !lc ? path
        : err.status === 400 ? 'invalid scenario' : err.status === 403 ? 'not allowed' : 'run not started';
      showError(title, message, span);
    } finally {
      submit.disabled = false;
    }
  }

  return () => clearTimeout(checkTimer);
}
