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

/**
 * One bar per event on the turn's time axis, from the event to the next one (a tool call: to its
 * result); sizes are set through the DOM, as the Content-Security-Policy allows no style attribute.
 */
function waterfall(turn) {
  const times = turn.events.map((e) => Date.parse(e.at));
  const start = Math.min(Date.parse(turn.startedAt), ...times);
  const end = Math.max(Date.parse(turn.stoppedAt || turn.startedAt), ...times, start + 1);
  const share = (ms) => `${(ms / (end - start)) * 100}%`;
  const items = turn.events.map((e, i) => {
    const result = e.type === 'tool_call' && turn.events.find((r) => r.type === 'tool_result' && r.callId === e.callId);
    const until = result ? Date.parse(result.at) : (times[i + 1] ?? end);
    const bar = h('span', { class: `bar ${e.type}` });
    bar.style.marginLeft = share(times[i] - start);
    bar.style.width = `max(3px, ${share(until - times[i])})`;
    return h('li', {}, h('span', { class: 'event' }, `${e.parentId ? '↳ ' : ''}${label(e)} · +${times[i] - start} ms`), bar);
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
