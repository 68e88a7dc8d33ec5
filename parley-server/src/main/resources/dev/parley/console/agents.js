// Agents: the managed agents the hub runs, their state, last heartbeat, current tool, restarts, logs; stop and restart.
import { api, notPermitted } from './api.js';
import { h, table, notPermittedNote, failure, time } from './dom.js';

let list; let logs; let status;

const stopped = (agent) => agent.state === 'stopped' || agent.state === 'failed';

async function refresh() {
  try {
    const { items } = await api('/v1/agents');
    list.replaceChildren(table(`${items.length} managed agents`,
      ['Agent', 'Parent', 'Runner', 'Wake', 'State', 'Last heartbeat', 'Current tool', 'Restarts', 'Failure', 'Actions'],
      items.map((a) => [a.id, a.parent || '—', a.runner, a.wake, a.state,
        a.lastHeartbeatAt ? time(a.lastHeartbeatAt) : '—', a.currentTool || '—', a.restarts, a.failure || '—', h('span', { class: 'actions' },
        h('button', { type: 'button', onclick: () => tail(a.id), 'aria-label': `Logs of ${a.id}` }, 'Logs'),
        stopped(a) ? h('button', { type: 'button', onclick: () => act(a.id, 'restart'), 'aria-label': `Start ${a.id}` }, 'Start')
          : h('button', { type: 'button', onclick: () => act(a.id, 'restart'), 'aria-label': `Restart ${a.id}` }, 'Restart'),
        h('button', { type: 'button', onclick: () => act(a.id, 'stop'), 'aria-label': `Stop ${a.id}` }, 'Stop'))]),
      'No managed agents.'));
  } catch (e) {
    list.replaceChildren(notPermitted(e) ? notPermittedNote() : failure(e));
  }
}

async function tail(id) {
  try {
    const text = await api(`/v1/agents/${id}/logs?lines=100`);
    logs.replaceChildren(h('h3', {}, `Last lines of ${id}`),
      text.trim() ? h('pre', { tabindex: '0' }, text) : h('p', { class: 'empty' }, 'No log lines yet.'));
  } catch (e) {
    logs.replaceChildren(notPermitted(e) ? notPermittedNote() : failure(e));
  }
}

async function act(id, what) {
  try {
    const agent = await api(`/v1/agents/${id}/${what}`, { method: 'POST' });
    status.textContent = `${id} is ${agent.state}.`;
  } catch (e) {
    status.textContent = notPermitted(e) ? 'Not permitted for this token.' : `The hub refused: ${e.message}`;
  }
  refresh();
}

export default {
  id: 'agents',
  title: 'Agents',
  init(section) {
    status = h('p', { role: 'status' });
    list = h('div', {});
    logs = h('div', { class: 'detail' });
    section.append(h('button', { type: 'button', onclick: refresh }, 'Refresh'), status, list, logs);
  },
  show: refresh,
};
