// page_cluster.js — the masters: this node's role, the leader, the Raft term
// and indexes, and every member's addresses and reachability.

import {getJson} from './api.js';
import {badge, errorBox, fill, fmtInt, fmtNum, h, table, tile} from './dom.js';

export function render(main) {
  const tiles = h('section.tiles#cluster-tiles');
  const list = h('div#members-list');
  fill(main, h('h1', 'Cluster'), tiles, h('h2', 'Members'), list);
  let timer = null, closed = false;

  async function refresh() {
    try {
      draw(await getJson('/api/v1/cluster'));
    } catch (err) {
      fill(list, errorBox(err));
    }
    if (!closed) timer = setTimeout(refresh, 2000);
  }

  function draw(c) {
    const members = c.members || [];
    const reachable = members.filter(m => m.reachable || m.id === c.id).length;
    fill(tiles,
      tile('this master', h('span#cluster-self', `#${c.id}`), c.role),
      tile('leader', h('span#cluster-leader', c.leader_id ? `#${c.leader_id}` : 'none'),
        c.leader_api ? h('a', {href: `${c.leader_api}/`}, c.leader_api) : 'no leader known'),
      tile('term', h('span#cluster-term', fmtInt(c.term))),
      tile('commit index', fmtInt(c.commit_index), `applied ${fmtInt(c.applied_index)}`),
      tile('reachable', `${reachable} of ${members.length}`, 'masters'));
    fill(list, table([
      {label: 'id', num: true, cell: m => `#${m.id}`},
      {label: 'role', cell: m => (m.id === c.leader_id ? badge('leader', 'running') : badge('follower', 'finished'))},
      {label: 'raft', cell: m => m.raft},
      {label: 'workers', cell: m => m.worker},
      {label: 'API', cell: m => (m.api ? h('a', {href: `http://${m.api}/`}, m.api) : '—')},
      {label: 'reachable', cell: m => (m.id === c.id ? 'this master' : m.reachable ? badge('yes', 'pass') : badge('no', 'fail'))},
      {label: 'last contact', num: true, cell: m => (m.id === c.id || m.last_contact_ms_ago === undefined ? '—'
        : `${fmtNum(m.last_contact_ms_ago / 1000)} s ago`)},
    ], members, {attrs: {id: 'members-table'}}));
  }

  refresh();
  return () => { closed = true; clearTimeout(timer); };
}
