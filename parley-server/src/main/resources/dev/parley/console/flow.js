// Live flow: envelopes as they are committed (GET /v1/messages/stream), filtered here; one opened in full.
import { api, follow, notPermitted, Refused } from './api.js';
import { h, table, notPermittedNote, failure, time } from './dom.js';

const KEEP = 500;
const seen = []; // newest first
let ctx; let rows; let detail; let status; let dropped = 0;
const filter = { node: '', kind: '', thread: '' };

function matches(e) {
  return (!filter.node || e.from === filter.node || e.to === filter.node)
    && (!filter.kind || e.kind === filter.kind)
    && (!filter.thread || e.threadId === filter.thread);
}

function render() {
  const shown = seen.filter(matches);
  rows.replaceChildren(table(`${shown.length} of ${seen.length} envelopes seen since this page opened`,
    ['Time', 'From', 'To', 'Kind', 'Thread', 'Text', 'Envelope'],
    shown.map((e) => [time(e.createdAt), e.from, e.to, e.kind, e.threadId || '—', (e.text || '').slice(0, 80),
      h('button', { type: 'button', class: 'link', onclick: () => open(e.id) }, e.id.slice(-12))]),
    'No envelope yet: they appear here as they are committed.'));
}

async function open(id) {
  detail.replaceChildren(h('p', {}, `Loading ${id}…`));
  let message;
  try {
    message = await api(`/v1/messages/${encodeURIComponent(id)}`);
  } catch (e) {
    detail.replaceChildren(notPermitted(e) ? notPermittedNote() : failure(e));
    return;
  }
  detail.replaceChildren(
    h('h3', { id: 'envelope-title', tabindex: '-1' }, `Envelope ${id}`),
    h('p', {}, `State: ${message.state}`),
    table('Timeline', ['State', 'At', 'Detail'], (message.timeline || []).map((t) => [t.state, time(t.at), t.detail || ''])),
    h('button', { type: 'button', onclick: () => ctx.show('traces', id) }, 'Show its trace'),
    h('pre', { tabindex: '0' }, JSON.stringify(message, null, 2)));
  document.getElementById('envelope-title').focus();
}

async function connect() {
  try {
    await follow('/v1/messages/stream', {
      onOpen: () => { status.textContent = 'Following the hub’s commits.'; },
      onEvent: (kind, envelope) => {
        seen.unshift(envelope);
        seen.length = Math.min(seen.length, KEEP);
        render();
      },
      onComment: (text) => {
        if (text.startsWith('dropped ')) {
          dropped += Number(text.slice(8));
          status.textContent = `Following; ${dropped} envelopes were dropped because this page fell behind.`;
        }
      },
    });
    status.textContent = 'The stream ended; reconnecting.';
  } catch (e) {
    if (e instanceof Refused && e.status === 401) { // the token stopped working: asking again cannot help
      status.textContent = 'The token is no longer accepted; log in again to follow the flow.';
      return;
    }
    status.textContent = notPermitted(e) ? 'Not permitted for this token.' : `The stream failed (${e.message}); reconnecting.`;
  }
  setTimeout(connect, 1000);
}

function input(name, label) {
  const id = `flow-${name}`;
  return h('div', { class: 'field' }, h('label', { for: id }, label),
    h('input', { id, type: 'text', oninput: (event) => { filter[name] = event.target.value.trim(); render(); } }));
}

export default {
  id: 'flow',
  title: 'Live flow',
  init(section, context) {
    ctx = context;
    status = h('p', { role: 'status' });
    rows = h('div', {});
    detail = h('div', { class: 'detail' });
    section.append(h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter the flow',
      onsubmit: (event) => event.preventDefault() },
    input('node', 'Node (from or to)'), input('kind', 'Kind'), input('thread', 'Thread')), status, rows, detail);
    render();
    connect();
  },
  show(id) {
    if (id) open(id);
  },
};
