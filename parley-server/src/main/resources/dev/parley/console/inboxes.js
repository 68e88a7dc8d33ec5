// Inboxes: per node, how it is reached (stream or webhook), retries, redelivery, dead letters, last envelope seen.
import { api, notPermitted } from './api.js';
import { h, table, notPermittedNote, failure, time } from './dom.js';
import { lastTo } from './flow.js';

let list;

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
    const delivery = await api(`/v1/nodes/${n.id}/delivery`).catch(() => null);
    const last = lastTo(n.id);
    return [n.id,
      delivery ? (delivery.webhook ? `webhook ${delivery.webhook.url}` : 'stream') : 'not permitted',
      delivery ? `${delivery.retry.maxAttempts} attempts from ${delivery.retry.baseMs} ms` : '—',
      delivery && delivery.redeliverAfterMs ? `after ${delivery.redeliverAfterMs} ms` : 'off',
      letters ? letters.filter((d) => d.node === n.id).length : 'not permitted',
      last ? `${time(last.createdAt)} (${last.kind} from ${last.from})` : '—'];
  }));
  list.replaceChildren(table(`${nodes.length} inboxes`,
    ['Node', 'Delivery', 'Retries', 'Redelivery', 'Dead letters', 'Last envelope seen here'], rows));
}

export default {
  id: 'inboxes',
  title: 'Inboxes',
  init(section) {
    list = h('div', {});
    section.append(h('button', { type: 'button', onclick: refresh }, 'Refresh'), list);
  },
  show: refresh,
};
