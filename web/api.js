// api.js — the master's JSON API as the dashboard calls it. The bearer token
// lives in sessionStorage only: it is gone when the tab closes, and no cookie
// ever carries it (so no request can be forged from another site).

const TOKEN_KEY = 'loadcluster.token';
const ROLE_KEY = 'loadcluster.role';

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function role() {
  return sessionStorage.getItem(ROLE_KEY) || 'tenant';
}

export function isAdmin() {
  return role() === 'admin';
}

export function signIn(secret, tokenRole) {
  sessionStorage.setItem(TOKEN_KEY, secret);
  sessionStorage.setItem(ROLE_KEY, tokenRole);
}

export function signOut() {
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(ROLE_KEY);
}

export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

// Called with no arguments when the master answers 401: the app signs out
// and shows the login page.
let onUnauthorized = () => {};
export function setUnauthorizedHandler(fn) {
  onUnauthorized = fn;
}

async function send(method, path, body, secret, contentType = 'application/json') {
  const headers = {Authorization: `Bearer ${secret ?? token() ?? ''}`};
  const init = {method, headers, cache: 'no-store', redirect: 'manual'};
  if (body !== undefined) {
    headers['Content-Type'] = contentType;
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (err) {
    throw new ApiError(0, `cannot reach the master: ${err.message}`);
  }
  // A follower answers writes with 307 to the leader's API, another origin:
  // the browser would drop the token on the way, so say where to go instead.
  if (res.type === 'opaqueredirect' || res.status === 307)
    throw new ApiError(307, await followerMessage());
  if (res.status === 401 && secret === undefined) {
    onUnauthorized();
    throw new ApiError(401, 'signed out: the token is missing or no longer valid');
  }
  return res;
}

async function followerMessage() {
  try {
    const c = await getJson('/api/v1/cluster');
    if (c.leader_api)
      return `this master is a follower: make changes on the leader's dashboard at ${c.leader_api}/`;
  } catch (err) {
    // fall through: the generic message below
  }
  return 'this master is a follower and no leader is known right now';
}

async function decode(res) {
  const text = await res.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch (err) {
    body = null;
  }
  if (!res.ok) {
    const msg = body && typeof body.error === 'string' ? body.error : `${res.status} ${res.statusText}`;
    throw new ApiError(res.status, msg, body);
  }
  return body;
}

export async function getJson(path) {
  return decode(await send('GET', path));
}

// contentType: of a string body; the answer is JSON whatever was sent.
export async function postJson(path, body, contentType) {
  return decode(await send('POST', path, body, undefined, contentType));
}

export async function patchJson(path, body) {
  return decode(await send('PATCH', path, body));
}

export async function deleteJson(path) {
  return decode(await send('DELETE', path));
}

// Checks a token before keeping it; returns its role ("admin" or "tenant").
export async function probeToken(secret) {
  const res = await send('GET', '/api/v1/cluster', undefined, secret);
  if (res.status === 401) throw new ApiError(401, 'the master does not know this token');
  await decode(res);
  const tenants = await send('GET', '/api/v1/tenants', undefined, secret);
  return tenants.ok ? 'admin' : 'tenant';
}

// A file from the API (reports): a Blob, with the token sent as for JSON.
export async function getBlob(path) {
  const res = await send('GET', path);
  if (!res.ok) await decode(res);
  return res.blob();
}

export const runPath = id => `/api/v1/runs/${encodeURIComponent(id)}`;
