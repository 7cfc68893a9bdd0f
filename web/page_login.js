// page_login.js — sign in with an API bearer token. The token is checked
// against the master, then kept in sessionStorage (this tab only).

import {probeToken, signIn} from './api.js';
import {errorBox, fill, h} from './dom.js';

export function render(main, params, {onSignedIn}) {
  const input = h('input#token', {type: 'password', autocomplete: 'off', spellcheck: 'false',
    placeholder: 'lct_…', required: true, 'aria-describedby': 'login-error'});
  const err = h('div#login-error');
  const button = h('button.primary#login-submit', {type: 'submit'}, 'Sign in');
  const form = h('form.login', {onsubmit: async ev => {
    ev.preventDefault();
    button.disabled = true;
    fill(err);
    try {
      const secret = input.value.trim();
      const role = await probeToken(secret);
      signIn(secret, role);
      onSignedIn();
    } catch (e) {
      fill(err, errorBox(e));
    } finally {
      button.disabled = false;
    }
  }},
  h('h1', 'Sign in'),
  h('p', 'Paste an API token (loadctl tokens add, or the admin token file of the masters). ',
    'It stays in this browser tab only and is sent with every request as a bearer token.'),
  h('label', {for: 'token'}, 'API token'), input, button, err);
  fill(main, form);
  input.focus();
  return null;
}
