// Charts: sends/s, commit p99, backlog and dead letters, from /metrics read every 5 s while the page is
// open; the last hour is kept in this page's memory only (the hub keeps no history).
import uPlot from './lib/uplot.js';
import { api, notPermitted } from './api.js';
import { h, notPermittedNote, failure } from './dom.js';

const EVERY_MS = 5000;
const KEEP = 3600 * 1000 / EVERY_MS;
const CHARTS = [
  { key: 'sends', title: 'Sends accepted per second' },
  { key: 'p99', title: 'Commit latency p99 (ms)' },
  { key: 'backlog', title: 'Inbox backlog (envelopes never delivered)' },
  { key: 'dead', title: 'Dead letters (total since the hub started)' },
];
const data = { t: [], sends: [], p99: [], backlog: [], dead: [] };
let note; let plots = {}; let previous; let section;

/** Prometheus text into {"name{labels}": value}. */
function parse(text) {
  const out = {};
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    out[line.slice(0, cut)] = Number(line.slice(cut + 1));
  }
  return out;
}

/** The bucket bound under which 99 % of the commits since the last sample fell, in ms. */
function p99(now, before) {
  const prefix = 'parley_commit_latency_seconds_bucket{le="';
  const buckets = Object.keys(now).filter((k) => k.startsWith(prefix))
    .map((k) => ({ le: k.slice(prefix.length, -2), n: now[k] - ((before && before[k]) || 0) }));
  const total = buckets.find((b) => b.le === '+Inf');
  if (!total || total.n === 0) return null;
  const hit = buckets.find((b) => b.n >= 0.99 * total.n);
  return hit.le === '+Inf' ? null : Number(hit.le) * 1000;
}

async function sample() {
  let metrics;
  try {
    metrics = parse(await api('/metrics'));
  } catch (e) {
    note.replaceChildren(notPermitted(e) ? notPermittedNote() : failure(e));
    return;
  }
  const t = Date.now() / 1000;
  const seconds = previous ? t - previous.t : 0;
  const sends = metrics.parley_sends_accepted_total;
  data.t.push(t);
  data.sends.push(previous && seconds > 0 ? (sends - previous.metrics.parley_sends_accepted_total) / seconds : null);
  data.p99.push(p99(metrics, previous && previous.metrics));
  data.backlog.push(metrics.parley_inbox_backlog);
  data.dead.push(metrics.parley_dead_letters_total);
  for (const key of Object.keys(data)) data[key].splice(0, Math.max(0, data[key].length - KEEP));
  previous = { t, metrics };
  note.textContent = `${data.t.length} samples, one every ${EVERY_MS / 1000} s, kept for an hour while this page is open.`;
  if (!section.hidden) draw();
}

function draw() {
  for (const chart of CHARTS) {
    const values = [data.t, data[chart.key]];
    if (plots[chart.key]) {
      plots[chart.key].setData(values);
      continue;
    }
    const target = document.getElementById(`chart-${chart.key}`);
    plots[chart.key] = new uPlot({ width: Math.max(320, target.clientWidth || 600), height: 180,
      series: [{}, { label: chart.title, stroke: '#2563eb', width: 2, spanGaps: true }] }, values, target);
  }
}

export default {
  id: 'charts',
  title: 'Charts',
  init(el) {
    section = el;
    note = h('p', { role: 'status' });
    section.append(note, ...CHARTS.map((c) => h('figure', {},
      h('figcaption', { id: `chart-${c.key}-caption` }, c.title),
      h('div', { id: `chart-${c.key}`, class: 'chart', role: 'img', 'aria-labelledby': `chart-${c.key}-caption` }))));
    sample();
    setInterval(sample, EVERY_MS);
  },
  show() {
    setTimeout(draw); // once the section is laid out, so the charts know their width
  },
};
