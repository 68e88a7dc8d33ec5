// The console's shell: log in, the views' navigation, who is logged in.
import { api, session, Refused } from './api.js';
import { h } from './dom.js';
import topology from './topology.js';
import flow from './flow.js';
import inboxes from './inboxes.js';
import deadLetters from './dead-letters.js';
import audit from './audit.js';
import agents from './agents.js';
import traces from './traces.js';
import charts from './charts.js';

const VIEWS = [topology, flow, inboxes, deadLetters, audit, agents, traces, charts];
const $ = (id) => document.getElementById(id);

// #token=… logs in directly (scripts, tests); the fragment is cleared before anything else runs.
if (location.hash.startsWith('#token=')) {
  session.set(decodeURIComponent(location.hash.slice('#token='.length)));
  history.replaceState(null, '', location.pathname + location.search);
}

$('login-form').addEventListener('submit', (event) => {
  event.preventDefault();
  session.set($('token').value.trim());
  $('token').value = '';
  start();
});
$('logout').addEventListener('click', () => {
  session.clear();
  location.reload();
});

async function whoami() {
  try {
    await api('/v1/policy'); // only the admin may read the policy
    return { admin: true };
  } catch (e) {
    if (e instanceof Refused && e.status === 403) return { admin: false, node: (await api('/v1/inbox/summary')).node };
    throw e;
  }
}

async function start() {
  if (!session.token()) {
    $('login').hidden = false;
    $('token').focus();
    return;
  }
  let who;
  try {
    who = await whoami();
  } catch (e) {
    session.clear();
    $('login-error').textContent = e instanceof Refused && e.status === 401
      ? 'That token is not valid on this hub.' : `The hub could not be reached: ${e.message}`;
    $('login').hidden = false;
    $('token').focus();
    return;
  }
  $('login').remove();
  $('who').textContent = who.admin ? 'Logged in as the admin' : `Logged in as node ${who.node}`;
  $('logout').hidden = false;
  const ctx = { ...who, show };
  const nav = $('views');
  const main = $('main');
  for (const view of VIEWS) {
    const section = h('section', { id: view.id, 'aria-labelledby': `${view.id}-title`, hidden: true },
      h('h2', { id: `${view.id}-title` }, view.title));
    main.append(section);
    view.init(section, ctx);
    nav.append(h('button', { type: 'button', 'data-view': view.id, onclick: () => show(view.id) }, view.title));
  }
  nav.hidden = false;
  show(VIEWS[0].id);
}

/** Shows one view (and hands it args, such as a message id to open). */
function show(id, ...args) {
  for (const view of VIEWS) {
    const on = view.id === id;
    $(view.id).hidden = !on;
    document.querySelector(`[data-view="${view.id}"]`).setAttribute('aria-current', on ? 'page' : 'false');
    if (on) view.show(...args);
  }
}

start();
