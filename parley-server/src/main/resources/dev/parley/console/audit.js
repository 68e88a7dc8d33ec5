// Audit: the log searched by node, decision, rule and time; the policy version in force.
import { api, notPermitted } from './api.js';
import { h, table, notPermittedNote, failure, time } from './dom.js';

let form; let policy; let results;

async function search() {
  const data = new FormData(form);
  const query = new URLSearchParams({ limit: '200' });
  for (const name of ['node', 'decision', 'rule']) {
    if (data.get(name)) query.set(name, data.get(name));
  }
  for (const name of ['since', 'until']) { // datetime-local is the browser's local time
    if (data.get(name)) query.set(name, new Date(data.get(name)).toISOString());
  }
  try {
    const { items } = await api(`/v1/audit?${query}`);
    results.replaceChildren(table(`${items.length} entries, newest first`,
      ['At', 'Actor', 'Action', 'Target', 'Decision', 'Rule', 'Reason', 'Policy'],
      items.map((a) => [time(a.at), a.actor, a.action, a.target, a.decision, a.rule || '—', a.reason,
        (a.policyVersion || '').slice(0, 12)]), 'No entry matches.'));
  } catch (e) {
    results.replaceChildren(notPermitted(e) ? notPermittedNote() : failure(e));
  }
}

async function showPolicy() {
  try {
    const p = await api('/v1/policy');
    policy.textContent = `Policy in force: version ${p.version}, ${p.rules.length} rules.`;
  } catch (e) {
    policy.textContent = notPermitted(e) ? 'The policy: not permitted for this token.' : `The policy: ${e.message}`;
  }
}

function field(name, label, control) {
  return h('div', { class: 'field' }, h('label', { for: `audit-${name}` }, label), control);
}

export default {
  id: 'audit',
  title: 'Audit',
  init(section) {
    policy = h('p', {});
    results = h('div', {});
    form = h('form', { class: 'filters', 'aria-label': 'Search the audit log',
      onsubmit: (event) => { event.preventDefault(); search(); } },
    field('node', 'Node', h('input', { id: 'audit-node', name: 'node', type: 'text' })),
    field('decision', 'Decision', h('select', { id: 'audit-decision', name: 'decision' },
      h('option', { value: '' }, 'any'), h('option', { value: 'allow' }, 'allow'), h('option', { value: 'deny' }, 'deny'))),
    field('rule', 'Rule', h('input', { id: 'audit-rule', name: 'rule', type: 'text' })),
    field('since', 'Since', h('input', { id: 'audit-since', name: 'since', type: 'datetime-local' })),
    field('until', 'Until', h('input', { id: 'audit-until', name: 'until', type: 'datetime-local' })),
    h('button', { type: 'submit' }, 'Search'));
    section.append(policy, form, results);
  },
  show() {
    showPolicy();
    search();
  },
};
