// Dead letters: list, inspect, redrive, drop (the same routes, checks and audit as `parley dlq`).
import { api, notPermitted } from './api.js';
import { h, table, notPermittedNote, failure, time } from './dom.js';

let list; let detail; let status;

async function refresh() {
  try {
    const { items } = await api('/v1/dead-letters?limit=200');
    list.replaceChildren(table(`${items.length} dead letters`, ['Envelope', 'Node', 'Reason', 'Attempts', 'At', 'Actions'],
      items.map((d) => [d.id, d.node, d.reason, d.attempts, time(d.at), h('span', { class: 'actions' },
        h('button', { type: 'button', onclick: () => inspect(d.id), 'aria-label': `Inspect ${d.id}` }, 'Inspect'),
        h('button', { type: 'button', onclick: () => act(d.id, 'redrive'), 'aria-label': `Redrive ${d.id}` }, 'Redrive'),
        h('button', { type: 'button', onclick: () => act(d.id, 'drop'), 'aria-label': `Drop ${d.id}` }, 'Drop'))]),
      'No dead letters.'));
  } catch (e) {
    list.replaceChildren(notPermitted(e) ? notPermittedNote() : failure(e));
  }
}

async function inspect(id) {
  try {
    const [letter, message] = await Promise.all([api(`/v1/dead-letters/${id}`), api(`/v1/messages/${id}`)]);
    detail.replaceChildren(h('h3', {}, `Dead letter ${id}`), h('p', {}, `State: ${message.state}`),
      table('Timeline', ['State', 'At', 'Detail'], message.timeline.map((t) => [t.state, time(t.at), t.detail || ''])),
      h('pre', { tabindex: '0' }, JSON.stringify(letter.envelope, null, 2)));
  } catch (e) {
    detail.replaceChildren(notPermitted(e) ? notPermittedNote() : failure(e));
  }
}

async function act(id, what) {
  try {
    if (what === 'redrive') {
      await api(`/v1/dead-letters/${id}/redrive`, { method: 'POST' });
      const message = await api(`/v1/messages/${id}`);
      status.textContent = `Redriven: ${id} is now ${message.state}.`;
    } else {
      await api(`/v1/dead-letters/${id}`, { method: 'DELETE' });
      status.textContent = `Dropped ${id}.`;
    }
  } catch (e) {
    status.textContent = notPermitted(e) ? 'Not permitted for this token.' : `The hub refused: ${e.message}`;
  }
  detail.replaceChildren();
  refresh();
}

export default {
  id: 'dead-letters',
  title: 'Dead letters',
  init(section) {
    status = h('p', { role: 'status', class: 'status' });
    list = h('div', {});
    detail = h('div', { class: 'detail' });
    section.append(h('button', { type: 'button', onclick: refresh }, 'Refresh'), status, list, detail);
  },
  show: refresh,
};
