// Topology: nodes (coloured by kind, outlined by their agent's state, inside their gateway on a federation),
// lineage and grants, refreshed every 2 s.
import cytoscape from './lib/cytoscape.js';
import { api, notPermitted } from './api.js';
import { h, table, notPermittedNote, failure } from './dom.js';

const KIND_COLOURS = { managed: '#2563eb', external: '#15803d', human: '#c2410c' };
const STATE_COLOURS = { running: '#16a34a', idle: '#64748b', stopped: '#111827', failed: '#dc2626' };
const STYLE = [
  { selector: 'node', style: { label: 'data(label)', 'background-color': 'data(colour)', 'border-width': 3,
    'border-color': 'data(state)', color: '#111827', 'font-size': 12, 'text-valign': 'bottom', 'text-margin-y': 4 } },
  { selector: 'node.gateway', style: { 'background-color': '#f1f5f9', 'border-color': '#475569', 'border-width': 1,
    'text-valign': 'top', 'font-size': 12 } },
  { selector: 'edge.lineage', style: { width: 2, 'line-color': '#94a3b8', 'curve-style': 'bezier' } },
  { selector: 'edge.grant', style: { width: 2, 'line-color': '#7c3aed', 'line-style': 'dashed',
    'target-arrow-shape': 'triangle', 'target-arrow-color': '#7c3aed', 'curve-style': 'bezier' } },
];

let section; let graph; let list; let cy; let shape = ''; let visible = false;

async function refresh() {
  let nodes; let grants = []; let agents = [];
  try {
    nodes = (await api('/v1/nodes')).items;
    grants = (await api('/v1/grants').catch((e) => (notPermitted(e) ? { items: [] } : Promise.reject(e)))).items;
    agents = (await api('/v1/agents').catch(() => ({ items: [] }))).items;
  } catch (e) {
    list.replaceChildren(notPermitted(e) ? notPermittedNote() : failure(e));
    return;
  }
  const states = Object.fromEntries(agents.map((a) => [a.id, a.state]));
  const known = new Set(nodes.map((n) => n.id));
  const gateways = [...new Set(nodes.map((n) => n.gateway).filter(Boolean))]; // set on a federation's gateways
  const elements = [
    ...gateways.map((g) => ({ data: { id: `gateway:${g}`, label: `gateway ${g}` }, classes: 'gateway' })),
    ...nodes.map((n) => ({ data: { id: n.id, label: n.id, parent: n.gateway ? `gateway:${n.gateway}` : undefined,
      colour: KIND_COLOURS[n.kind] || '#475569', state: STATE_COLOURS[states[n.id]] || '#ffffff' } })),
    ...nodes.filter((n) => n.parent && known.has(n.parent))
      .map((n) => ({ data: { id: `lineage:${n.id}`, source: n.parent, target: n.id }, classes: 'lineage' })),
    ...grants.filter((g) => known.has(g.from) && known.has(g.to))
      .map((g) => ({ data: { id: `grant:${g.id}`, source: g.from, target: g.to }, classes: 'grant' })),
  ];
  list.replaceChildren(table(`${nodes.length} nodes, ${grants.length} grants`,
    ['Node', 'Kind', 'Parent', 'Group', 'Agent', 'Gateway'],
    nodes.map((n) => [n.id, n.kind, n.parent || '—', n.group.length, states[n.id] || '—', n.gateway || '—'])));
  const now = JSON.stringify(elements);
  if (now === shape) return;
  shape = now;
  cy.elements().remove();
  cy.add(elements);
  if (visible) layout();
}

function layout() {
  cy.resize();
  cy.layout({ name: 'breadthfirst', directed: true, padding: 20, spacingFactor: 1.1 }).run();
}

export default {
  id: 'topology',
  title: 'Topology',
  init(el) {
    section = el;
    graph = h('div', { class: 'graph', role: 'img',
      'aria-label': 'The nodes as a graph: lineage in grey, grants as dashed purple arrows. The table below lists the same.' });
    list = h('div', { 'aria-live': 'polite' });
    section.append(h('p', { class: 'legend' },
      h('span', { class: 'swatch managed' }), 'managed ', h('span', { class: 'swatch external' }), 'external ',
      h('span', { class: 'swatch human' }), 'human · outline: agent state (green running, red failed)'), graph, list);
    cy = cytoscape({ container: graph, style: STYLE, maxZoom: 1.5, boxSelectionEnabled: false });
    refresh();
    setInterval(refresh, 2000);
  },
  show() {
    visible = true;
    layout();
  },
};
