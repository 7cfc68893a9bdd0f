// page_tenants.js — tenants and their weights, and API tokens (admin only):
// add a tenant, change a weight, create a token (its secret is shown once),
// revoke one.

import {deleteJson, getJson, isAdmin, patchJson, postJson} from './api.js';
import {errorBox, fill, fmtTime, h, table} from './dom.js';

export function render(main) {
  if (!isAdmin()) {
    fill(main, h('h1', 'Tenants'), errorBox('Tenants and tokens are for admin tokens only.'));
    return null;
  }
  const note = h('div.note', {role: 'status'});
  const tenantsBox = h('div#tenants-list');
  const tokensBox = h('div#tokens-list');
  const secretBox = h('div');
  const name = h('input#tenant-name', {placeholder: 'name', pattern: '[a-z0-9._-]{1,64}', required: true});
  const weight = h('input#tenant-weight', {type: 'number', min: 1, max: 1000, value: '1', required: true});
  const addTenant = h('form.inline#add-tenant', {onsubmit: async ev => {
    ev.preventDefault();
    await act(() => postJson('/api/v1/tenants', {name: name.value, weight: Number(weight.value)}),
      `tenant ${name.value} added`);
    name.value = '';
  }}, name, weight, h('button', {type: 'submit'}, 'Add tenant'));

  const role = h('select#token-role', {onchange: () => { tenantSel.disabled = role.value !== 'tenant'; }},
    h('option', {value: 'tenant'}, 'tenant'), h('option', {value: 'admin'}, 'admin'));
  const tenantSel = h('select#token-tenant');
  const tokenName = h('input#token-name', {placeholder: 'label (who or what uses it)'});
  const addToken = h('form.inline#add-token', {onsubmit: async ev => {
    ev.preventDefault();
    const body = {role: role.value, name: tokenName.value || undefined};
    if (role.value === 'tenant') body.tenant = tenantSel.value;
    await act(async () => {
      const t = await postJson('/api/v1/tokens', body);
      fill(secretBox, h('div.secret', h('strong', 'New token (shown only now): '), h('code#new-token', t.token)));
    }, 'token created');
    tokenName.value = '';
  }}, role, tenantSel, tokenName, h('button', {type: 'submit'}, 'Create token'));

  fill(main, h('h1', 'Tenants'), note, tenantsBox, addTenant,
    h('h2', 'API tokens'), tokensBox, addToken, secretBox);

  async function act(fn, done) {
    try {
      await fn();
      fill(note, h('p.ok', done));
    } catch (err) {
      fill(note, errorBox(err));
    }
    refresh();
  }

  async function refresh() {
    try {
      const [tenants, tokens] = await Promise.all([getJson('/api/v1/tenants'), getJson('/api/v1/tokens')]);
      drawTenants(tenants.tenants || []);
      drawTokens(tokens.tokens || []);
    } catch (err) {
      fill(tenantsBox, errorBox(err));
    }
  }

  function drawTenants(tenants) {
    const keep = tenantSel.value;
    fill(tenantSel, tenants.map(t => h('option', {value: t.name}, t.name)));
    if (keep) tenantSel.value = keep;
    fill(tenantsBox, table([
      {label: 'tenant', cell: t => h('a', {href: `#/runs?tenant=${encodeURIComponent(t.name)}`}, t.name)},
      {label: 'weight', cell: t => weightEditor(t)},
      {label: 'created', cell: t => fmtTime(t.created_at)},
    ], tenants, {attrs: {id: 'tenants-table'}}));
  }

  function weightEditor(t) {
    const input = h('input.weight', {type: 'number', min: 1, max: 1000, value: String(t.weight),
      'aria-label': `weight of ${t.name}`});
    return h('form.inline', {onsubmit: ev => {
      ev.preventDefault();
      act(() => patchJson(`/api/v1/tenants/${encodeURIComponent(t.name)}`, {weight: Number(input.value)}),
        `weight of ${t.name} set to ${input.value}`);
    }}, input, h('button', {type: 'submit'}, 'Set'));
  }

  function drawTokens(tokens) {
    fill(tokensBox, table([
      {label: 'id', cell: t => h('code', t.id)},
      {label: 'role', cell: t => t.role},
      {label: 'tenant', cell: t => t.tenant || '—'},
      {label: 'name', cell: t => t.name || '—'},
      {label: 'created', cell: t => fmtTime(t.created_at)},
      {label: '', cell: t => h('button.link', {type: 'button', onclick: () => {
        if (window.confirm(`Revoke token ${t.id}? Whoever uses it loses access.`))
          act(() => deleteJson(`/api/v1/tokens/${encodeURIComponent(t.id)}`), `token ${t.id} revoked`);
      }}, 'revoke')},
    ], tokens, {attrs: {id: 'tokens-table'}}));
  }

  refresh();
  return null;
}
