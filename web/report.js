// report.js — shows a run's HTML report in its own tab: /ui/report.html#run=ID.
//
// The report needs the bearer token, so a plain link cannot load it: this
// page fetches it with the token (sessionStorage, copied from the dashboard
// tab that opened this one) and replaces itself with the report as a blob:
// URL. A blob: document inherits the policy of the page that made it, which
// is why this page alone is served with inline styles allowed (the report is
// one self-contained file with a <style> element); scripts stay 'self' only.

import {getBlob, runPath, setUnauthorizedHandler, token} from './api.js';
import {errorBox, fill, h} from './dom.js';

const main = document.getElementById('main');
const id = new URLSearchParams(location.hash.slice(1)).get('run');

function fail(message) {
  fill(main, h('h1', 'Report'), errorBox(message), h('p', h('a', {href: '/#/runs'}, 'Open the dashboard')));
}

setUnauthorizedHandler(() => {});
if (!/^\d+$/.test(id || '')) {
  fail('No run given: the address should end in #run=ID.');
} else if (!token()) {
  fail('Not signed in: open the report from the run page of a signed-in dashboard tab.');
} else {
  getBlob(`${runPath(id)}/report.html`)
    .then(blob => location.replace(URL.createObjectURL(new Blob([blob], {type: 'text/html'}))))
    .catch(err => fail(`run ${id}: ${err.message}`));
}
