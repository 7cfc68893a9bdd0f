// jsonpath.js — where a JSON path ("tasks[1].method", as the master's
// validation errors name them) sits in a JSON text, so the editor can point
// at the offending line. A small tolerant scanner: it records the offsets of
// every key and value it meets and stops quietly at the first syntax error.

// locate(text, 'tasks[1].method') → {start, end} character offsets of the
// member (key and value), or of the closest ancestor that exists; null when
// not even the root parses far enough.
export function locate(text, path) {
  const {spans} = scan(text);
  for (let p = normalize(path); p !== null; p = parent(p))
    if (spans.has(p)) return spans.get(p);
  return null;
}

// The offset where the text stops being JSON (the browser's JSON.parse
// message does not always say), or null when it scans to the end.
export function syntaxErrorAt(text) {
  const {stoppedAt, end} = scan(text);
  if (stoppedAt !== null) return stoppedAt;
  return text.slice(end).trim() === '' ? null : end + (text.slice(end).length - text.slice(end).trimStart().length);
}

// The JSON path at the head of a master's error ("tasks[1].method: expected
// …"), or null when the message names none.
export function errorPath(message) {
  const m = /^((?:[A-Za-z_][\w-]*|\[\d+\])(?:\.[A-Za-z_][\w-]*|\[\d+\])*):/.exec(message || '');
  return m ? normalize(m[1]) : null;
}

// The offset of a line and column (1-based), as in "invalid JSON at line 3
// column 7".
export function offsetOf(text, line, column) {
  let at = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf('\n', at);
    if (nl < 0) return text.length;
    at = nl + 1;
  }
  return Math.min(text.length, at + Math.max(0, column - 1));
}

function normalize(path) {
  return path.replace(/^\$\.?/, '').replace(/^\./, '');
}

function parent(path) {
  if (path === '') return null;
  const m = /^(.*?)(\.[^.[\]]+|\[\d+\])$/.exec(path);
  return m ? m[1] : '';
}

// The line (1-based) of a character offset.
export function lineOf(text, offset) {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text[i] === '\n') line++;
  return line;
}

function scan(text) {
  const spans = new Map();
  let i = 0;
  const ws = () => { while (i < text.length && /\s/.test(text[i])) i++; };
  const fail = () => { throw new Error('syntax'); };

  function string() {
    if (text[i] !== '"') fail();
    let out = '';
    for (i++; i < text.length && text[i] !== '"'; i++) {
      if (text[i] === '\\') {
        i++;
        const c = text[i];
        if (c === 'u') { out += String.fromCharCode(parseInt(text.slice(i + 1, i + 5), 16)); i += 4; }
        else out += {n: '\n', t: '\t', r: '\r', b: '\b', f: '\f'}[c] ?? c;
      } else {
        out += text[i];
      }
    }
    if (text[i] !== '"') fail();
    i++;
    return out;
  }

  function value(path, memberStart) {
    ws();
    const start = i;
    if (text[i] === '{') {
      i++; ws();
      if (text[i] === '}') i++;
      else for (;;) {
        ws();
        const keyStart = i;
        const key = string();
        ws();
        if (text[i] !== ':') fail();
        i++;
        value(path ? `${path}.${key}` : key, keyStart);
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === '}') { i++; break; }
        fail();
      }
    } else if (text[i] === '[') {
      i++; ws();
      if (text[i] === ']') i++;
      else for (let n = 0; ; n++) {
        value(`${path}[${n}]`, null);
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === ']') { i++; break; }
        fail();
      }
    } else if (text[i] === '"') {
      string();
    } else {
      const m = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 64));
      if (!m) fail();
      i += m[0].length;
    }
    spans.set(path, {start: memberStart ?? start, end: i});
  }

  let stoppedAt = null;
  try {
    value('', null);
  } catch (err) {
    // Keep what was recorded before the syntax error.
    stoppedAt = Math.min(i, text.length);
  }
  return {spans, stoppedAt, end: i};
}
