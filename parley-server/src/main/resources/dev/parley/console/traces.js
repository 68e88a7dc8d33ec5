// Traces: a message's (or a trace id's) agent turns as a waterfall of their events.
import { api, notPermitted } from './api.js';
import { h, notPermittedNote, failure } from './dom.js';

let input; let out;

function label(e) {
  switch (e.type) {
    case 'tool_call': return `tool ${e.tool} (${e.kind})`;
    case 'tool_result': return `result ${e.callId}${e.error ? ' (error)' : ''}`;
    case 'usage': return `usage: ${e.inputTokens} in, ${e.outputTokens} out${e.costUsd ? `, $${e.costUsd}` : ''}`;
    case 'message': return `${e.role}: ${(e.text || '').slice(0, 80)}`;
    case 'thought': return `thought: ${(e.text || '').slice(0, 80)}`;
    case 'stop': return `stop: ${e.reason}`;
    default: return e.type;
  }
}

/** One bar per event, placed on the turn's own time axis (the browser sets sizes, no inline style). */
function waterfall(turn) {
  const start = Date.parse(turn.startedAt);
  const end = Math.max(Date.parse(turn.stoppedAt || turn.startedAt), ...turn.events.map((e) => Date.parse(e.at)), start + 1);
  const items = turn.events.map((e) => {
    const bar = h('span', { class: `bar ${e.type}` });
    bar.style.marginLeft = `${((Date.parse(e.at) - start) / (end - start)) * 90}%`;
    return h('li', {}, h('span', { class: 'event' }, `${e.parentId ? '↳ ' : ''}${label(e)} · +${Date.parse(e.at) - start} ms`), bar);
  });
  return h('section', { class: 'turn', 'aria-label': `Turn ${turn.turn}` },
    h('h3', {}, `Turn ${turn.turn} by ${turn.node} (${turn.adapter}), ${end - start} ms`), h('ol', { class: 'waterfall' }, items));
}

async function load(id) {
  const path = /^[0-9a-f]{32}$/.test(id) ? `/v1/traces/${id}` : `/v1/messages/${encodeURIComponent(id)}/trace`;
  try {
    const trace = await api(path);
    out.replaceChildren(h('p', {}, `Trace ${trace.traceId}: ${trace.turns.length} turns${trace.truncated ? ' (truncated)' : ''}.`),
      ...trace.turns.map(waterfall));
  } catch (e) {
    out.replaceChildren(notPermitted(e) ? notPermittedNote() : failure(e));
  }
}

export default {
  id: 'traces',
  title: 'Traces',
  init(section) {
    out = h('div', { 'aria-live': 'polite' });
    input = h('input', { id: 'trace-id', type: 'text', required: true });
    section.append(h('form', { class: 'filters', 'aria-label': 'Open a trace',
      onsubmit: (event) => { event.preventDefault(); load(input.value.trim()); } },
    h('div', { class: 'field' }, h('label', { for: 'trace-id' }, 'Message id or trace id'), input),
    h('button', { type: 'submit' }, 'Show')), out);
  },
  show(id) {
    if (id) {
      input.value = id;
      load(id);
    }
  },
};
