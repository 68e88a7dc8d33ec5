// Inboxes: per node, its backlog and last delivery, how it is reached (stream or webhook) and how
// that stands now (streams open, a failing webhook, pushes waiting), retries, redelivery, dead letters.
import { api, notPermitted } from './api.js';
import { h, table, notPermittedNote, failure, time } from './dom.js';

let list; let ctx;

/**
 * The admin reads any inbox's summary and delivery; a node only its own, so for the other nodes
 * it sees the page asks nothing (each request costs the node a rate-limit token).
 */
const mine = (node) => ctx.admin || node === ctx.node;
const summary = (node) => (!mine(node) ? Promise.resolve(null)
  : api(ctx.admin ? `/v1/nodes/${node}/inbox/summary` : '/v1/inbox/summary').catch(() => null));
const delivery = (node) => (!mine(node) ? Promise.resolve(null) : api(`/v1/nodes/${node}/delivery`).catch(() => null));

async function refresh() {
  let nodes;
  try {
    nodes = (await api('/v1/nodes')).items;
  } catch (e) {
    list.replaceChildren(notPermitted(e) ? notPermittedNote() : failure(e));
    return;
  }
  const letters = await api('/v1/dead-letters?limit=1000').then((d) => d.items, () => null);
  const rows = await Promise.all(nodes.map(async (n) => {
    const [inbox, reach] = await Promise.all([summary(n.id), delivery(n.id)]);
    return [n.id,
      inbox ? inbox.backlog : 'not permitted',
      inbox ? inbox.head : '—',
      inbox && inbox.lastDeliveredAt ? time(inbox.lastDeliveredAt) : '—',
      reach ? (reach.webhook ? `webhook ${reach.webhook.url}` : 'stream') : 'not permitted',
      reach ? streams(reach.live) : '—',
      reach ? webhookState(reach) : '—',
      reach ? waiting(reach.live) : '—',
      reach ? `${reach.retry.maxAttempts} attempts from ${reach.retry.baseMs} ms` : '—',
      reach && reach.redeliverAfterMs ? `after ${reach.redeliverAfterMs} ms` : 'off',
      letters ? letters.filter((d) => d.node === n.id).length : 'not permitted'];
  }));
  list.replaceChildren(table(`${nodes.length} inboxes`,
    ['Node', 'Backlog', 'Head seq', 'Last delivery', 'Delivery', 'Streams', 'Webhook state', 'Pushes waiting', 'Retries',
      'Redelivery', 'Dead letters'], rows));
}

const streams = (live) => (live.streams ? `${live.streams} open` : 'none open');

function webhookState({ webhook, live }) {
  if (!webhook) return '—';
  return live.failing ? `failing since ${time(live.failingSince)} (${live.failedAttempts} attempts; last: ${live.lastError})`
    : 'not failing';
}

const waiting = (live) => (live.pushesWaiting ? `${live.pushesWaiting}, next attempt ${time(live.nextAttemptAt)}` : '0');

export default {
  id: 'inboxes',
  title: 'Inboxes',
  init(section, context) {
    ctx = context;
    list = h('div', {});
    section.append(h('button', { type: 'button', onclick: refresh }, 'Refresh'), list);
  },
  show: refresh,
};
