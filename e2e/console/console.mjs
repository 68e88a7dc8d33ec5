// The operator console in headless Chromium against a running hub: node console.mjs URL ADMIN_TOKEN.
// Every wait is for a condition (Playwright's waitFor, or a poll of the API with a deadline).
import { chromium } from 'playwright-core';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { check, finish } from '../checks.mjs';
import { fileURLToPath } from 'node:url';

const [url, admin] = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const artifacts = join(here, 'artifacts');
rmSync(artifacts, { recursive: true, force: true });
mkdirSync(artifacts, { recursive: true });
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const run = Date.now().toString(36);

async function call(token, method, path, body) {
  const res = await fetch(url + path, {
    method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** Polls fn until it returns something truthy, failing after timeoutMs. */
async function until(what, fn, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A loopback port nothing listens on (a webhook there fails at once). */
async function closedPort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-background-networking'],
});
const problems = []; // CSP violations and script errors on any page

async function open(token, name, init) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  if (init) await page.addInitScript(init);
  page.on('console', (m) => { // refusals (401, 403) are logged by the browser too: they are the API's answers, not faults
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`${name}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`${name}: ${e.message}`));
  if (token) {
    await page.goto(`${url}/console#token=${encodeURIComponent(token)}`);
    await page.getByRole('navigation', { name: 'Views' }).waitFor();
  }
  return page;
}

const view = (page, name) => page.getByRole('navigation', { name: 'Views' }).getByRole('button', { name, exact: true }).click();
const shot = (page, name) => page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });

// The fabric the checks look at: lead and its worker; a separate lead with its own child.
const lead = await call(admin, 'POST', '/v1/nodes', { id: `lead-${run}` });
const worker = await call(lead.token, 'POST', '/v1/nodes', { id: `worker-${run}` });
const other = await call(admin, 'POST', '/v1/nodes', { id: `other-${run}` });
const otherChild = await call(other.token, 'POST', '/v1/nodes', { id: `other-child-${run}` });
let adminPage;

await check('the login page logs in with the admin token, kept in session storage', async () => {
  const page = await open(null, 'login');
  const res = await page.goto(`${url}/console`);
  const csp = res.headers()['content-security-policy'] || '';
  if (!csp.includes("script-src 'self'") || !csp.includes("frame-ancestors 'none'")) throw new Error(`CSP: ${csp}`);
  await shot(page, 'login');
  await page.getByLabel(/Token/).fill(admin);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByText('Logged in as the admin').waitFor();
  if (await page.evaluate(() => sessionStorage.getItem('parley.token')) !== admin) throw new Error('token not in session storage');
  if (await page.evaluate(() => localStorage.length) !== 0) throw new Error('something was put in local storage');
  await page.context().close();
});

await check('#token= logs in directly and the fragment is cleared at once', async () => {
  adminPage = await open(admin, 'admin');
  await adminPage.getByText('Logged in as the admin').waitFor();
  if (adminPage.url().includes('#')) throw new Error(`the fragment stayed: ${adminPage.url()}`);
});

await check('a node created through the API appears in the topology', async () => {
  const id = `joined-${run}`;
  await call(lead.token, 'POST', '/v1/nodes', { id });
  await adminPage.locator('#topology').getByRole('cell', { name: id, exact: true }).waitFor({ timeout: 5000 });
  await shot(adminPage, 'topology');
});

await check('a message sent through the API appears in the live flow within 2 s', async () => {
  await view(adminPage, 'Live flow');
  await adminPage.getByText('Following the hub’s commits.').waitFor();
  const text = `run the tests ${run}`;
  await call(lead.token, 'POST', '/v1/messages', { to: worker.id, text });
  await adminPage.locator('#flow').getByRole('cell', { name: text }).waitFor({ timeout: 2000 });
  await shot(adminPage, 'flow');
  await adminPage.locator('#flow tbody tr').filter({ hasText: text }).getByRole('button').click();
  await adminPage.getByRole('heading', { name: /^Envelope / }).waitFor();
  await shot(adminPage, 'flow-envelope');
});

await check('a turn recorded for a message shows as a waterfall from its envelope', async () => {
  const text = `traced ${run}`;
  const sent = await call(lead.token, 'POST', '/v1/messages', { to: worker.id, text });
  const at = (ms) => new Date(Date.now() + ms).toISOString();
  await call(worker.token, 'POST', `/v1/traces/${sent.id}.1/events`, {
    envelope: sent.id, adapter: 'command', events: [
      { type: 'message', id: 'e1', role: 'user', text, at: at(0) },
      { type: 'tool_call', id: 'e2', callId: 'c1', tool: 'Bash', kind: 'execute', input: { command: 'mvn test' }, at: at(10) },
      { type: 'tool_result', id: 'e3', parentId: 'e2', callId: 'c1', error: false, output: 'green', at: at(400) },
      { type: 'usage', id: 'e4', inputTokens: 1200, outputTokens: 80, cacheReadTokens: 0, cacheWriteTokens: 0, at: at(450) },
      { type: 'stop', id: 'e5', reason: 'end_turn', at: at(500) },
    ],
  });
  await view(adminPage, 'Live flow');
  await adminPage.locator('#flow tbody tr').filter({ hasText: text }).getByRole('button').click();
  await adminPage.getByRole('button', { name: 'Show its trace' }).click();
  await adminPage.locator('#traces').getByText('tool Bash (execute)').waitFor();
  await adminPage.locator('#traces').getByText('usage: 1200 in, 80 out').waitFor();
  await shot(adminPage, 'trace');
});

await check('a dead letter is redriven from the page and its state changes', async () => {
  const hook = await call(lead.token, 'POST', '/v1/nodes', { id: `hook-${run}` });
  await call(admin, 'PUT', `/v1/nodes/${hook.id}/delivery`, {
    webhook: { url: `http://127.0.0.1:${await closedPort()}/hook`, secret: 'a-secret-of-24-characters' },
    retry: { maxAttempts: 1, baseMs: 10, capMs: 10 },
  });
  const sent = await call(lead.token, 'POST', '/v1/messages', { to: hook.id, text: 'lost' });
  await until('the dead letter', async () => (await call(admin, 'GET', '/v1/dead-letters')).items.some((d) => d.id === sent.id));
  // the operator mends the receiver (back to streams) before redriving
  await call(admin, 'PUT', `/v1/nodes/${hook.id}/delivery`, { webhook: null });
  await view(adminPage, 'Dead letters');
  const redrive = adminPage.getByRole('button', { name: `Redrive ${sent.id}` });
  await redrive.waitFor();
  await adminPage.getByRole('button', { name: `Inspect ${sent.id}` }).click();
  await adminPage.getByText('State: dead_lettered').waitFor();
  await shot(adminPage, 'dead-letters');
  await redrive.click();
  await adminPage.getByText(`Redriven: ${sent.id} is now accepted.`).waitFor();
  await redrive.waitFor({ state: 'detached' });
  const state = (await call(admin, 'GET', `/v1/messages/${sent.id}`)).state;
  if (state !== 'accepted') throw new Error(`state after redrive: ${state}`);
  await shot(adminPage, 'dead-letters-redriven');
});

await check('a node token sees only what that node may see', async () => {
  const page = await open(lead.token, 'lead');
  await page.getByText(`Logged in as node ${lead.id}`).waitFor();
  const topology = page.locator('#topology');
  await topology.getByRole('cell', { name: worker.id, exact: true }).waitFor();
  if (await topology.getByRole('cell', { name: other.id, exact: true }).count()) throw new Error(`lead sees ${other.id}`);
  await view(page, 'Live flow');
  await page.getByText('Following the hub’s commits.').waitFor();
  const hidden = `not for lead ${run}`;
  const shown = `for lead ${run}`;
  await call(other.token, 'POST', '/v1/messages', { to: otherChild.id, text: hidden });
  await call(lead.token, 'POST', '/v1/messages', { to: worker.id, text: shown });
  await page.locator('#flow').getByRole('cell', { name: shown }).waitFor({ timeout: 2000 });
  if (await page.getByText(hidden).count()) throw new Error('lead saw a message between other nodes');
  await view(page, 'Inboxes'); // its own inbox's summary, not its children's
  const backlog = (id) => page.locator('#inboxes tbody tr').filter({ has: page.getByRole('cell', { name: id, exact: true }) })
    .locator('td').nth(1);
  await backlog(lead.id).waitFor();
  if (!/^\d+$/.test(await backlog(lead.id).textContent())) throw new Error(`lead's own backlog: ${await backlog(lead.id).textContent()}`);
  if (await backlog(worker.id).textContent() !== 'not permitted') throw new Error('lead sees its child\'s inbox');
  await view(page, 'Dead letters');
  await page.locator('#dead-letters').getByText('Not permitted for this token.').waitFor();
  await shot(page, 'node-token');
  await page.context().close();
});

await check('a managed agent is stopped and started again from the page', async () => {
  const id = `upper-${run}`;
  await call(admin, 'POST', '/v1/agents', { spec: `id: ${id}\nrunner: command\ncommand: [sh, -c, "tr a-z A-Z"]\nwake: on-message\n` });
  await view(adminPage, 'Agents');
  await adminPage.getByRole('button', { name: `Stop ${id}` }).click();
  await adminPage.getByText(`${id} is stopped.`).waitFor();
  await adminPage.getByRole('button', { name: `Start ${id}`, exact: true }).click();
  await adminPage.getByText(new RegExp(`^${id} is (idle|running)\\.$`)).waitFor();
  await adminPage.getByRole('button', { name: `Logs of ${id}` }).click();
  await adminPage.getByRole('heading', { name: `Last lines of ${id}` }).waitFor();
  await shot(adminPage, 'agents');
});

await check('the agent row shows its restarts and the inbox row a failing webhook with its next attempt', async () => {
  const id = `crasher-${run}`; // its process ends at once: its supervisor starts it again after a backoff
  await call(admin, 'POST', '/v1/agents', { spec: `id: ${id}\nrunner: process\ncommand: [sh, -c, "exit 3"]\nwake: always\n` });
  await until('a restart', async () => (await call(admin, 'GET', `/v1/agents/${id}`)).restarts >= 1);
  await view(adminPage, 'Agents');
  const agents = adminPage.locator('#agents');
  await agents.getByRole('button', { name: 'Refresh' }).click();
  const column = async (name) => (await agents.locator('thead th').allTextContents()).indexOf(name);
  const restarts = agents.locator('tbody tr').filter({ has: adminPage.getByRole('cell', { name: id, exact: true }) })
    .locator('td').nth(await column('Restarts'));
  await until('the restart count in the row', async () => /^[1-9]\d*$/.test(await restarts.textContent()));
  await shot(adminPage, 'agents-restarts');

  const hook = await call(lead.token, 'POST', '/v1/nodes', { id: `failing-${run}` });
  await call(admin, 'PUT', `/v1/nodes/${hook.id}/delivery`, {
    webhook: { url: `http://127.0.0.1:${await closedPort()}/hook`, secret: 'a-secret-of-24-characters' },
    retry: { maxAttempts: 5, baseMs: 600000, capMs: 600000 }, // its retry waits: the row shows it
  });
  const sent = await call(lead.token, 'POST', '/v1/messages', { to: hook.id, text: 'to a dead endpoint' });
  await until('the retry', async () => (await call(admin, 'GET', `/v1/messages/${sent.id}`)).state === 'retry_pending');
  await view(adminPage, 'Inboxes');
  const inboxes = adminPage.locator('#inboxes');
  await inboxes.getByRole('button', { name: 'Refresh' }).click();
  const row = inboxes.locator('tbody tr').filter({ has: adminPage.getByRole('cell', { name: hook.id, exact: true }) });
  await row.getByRole('cell', { name: /^failing since .*cannot connect to 127.0.0.1/ }).waitFor();
  await row.getByRole('cell', { name: /^1, next attempt / }).waitFor();
  await shot(adminPage, 'inboxes-failing');
});

await check('the console is usable from the keyboard', async () => {
  // Every focus move, window focus change and key the page saw, for a failure to print: the check
  // failed once (a busy machine) and could not be made to fail again.
  const page = await open(admin, 'keyboard', () => {
    const log = (window.keyboardLog = []);
    const at = (t) => (t && t.tagName ? t.tagName.toLowerCase() + (t.id ? '#' + t.id : '') : String(t));
    for (const type of ['focusin', 'focusout', 'keydown']) {
      document.addEventListener(type, (e) => log.push(`${type} ${at(e.target)}${e.key ? ' ' + e.key : ''}`
        + ` (page focused: ${document.hasFocus()}, ${document.readyState})`), true);
    }
    window.addEventListener('blur', () => log.push('window blur'));
    window.addEventListener('focus', () => log.push('window focus'));
  });
  await page.keyboard.press('Tab'); // the skip link
  let label = '';
  const path = []; // where each Tab landed: a failure says where the focus went instead
  for (let i = 0; i < 12 && label !== 'Audit'; i++) {
    await page.keyboard.press('Tab');
    label = await page.evaluate(() => document.activeElement.textContent);
    path.push(await page.evaluate(() => `${document.activeElement.tagName.toLowerCase()}`
      + `${document.activeElement.id ? '#' + document.activeElement.id : ''} "${document.activeElement.textContent.replace(/\s+/g, ' ').slice(0, 24)}"`));
  }
  if (label !== 'Audit') {
    await shot(page, 'keyboard-failed');
    const seen = await page.evaluate(() => window.keyboardLog.join(' | '));
    throw new Error(`Tab never reached the Audit button; it went: ${path.join(' > ')}; the page saw: ${seen}`);
  }
  await page.keyboard.press('Enter');
  await page.locator('#audit').waitFor();
  await page.locator('#audit-node').focus();
  await page.keyboard.type(lead.id);
  await page.keyboard.press('Enter');
  await page.locator('#audit').getByRole('cell', { name: worker.id }).first().waitFor();
  await shot(page, 'audit');
  await page.context().close();
});

await check('axe-core finds no serious or critical violations in any view', async () => {
  const found = [];
  for (const name of ['Topology', 'Live flow', 'Inboxes', 'Dead letters', 'Audit', 'Agents', 'Traces', 'Charts']) {
    await view(adminPage, name);
    await adminPage.locator('section:not([hidden]) h2', { hasText: name }).waitFor();
    if (name === 'Charts') await adminPage.locator('.uplot').first().waitFor();
    if (name === 'Inboxes') await adminPage.locator('#inboxes tbody tr').first().waitFor();
    await shot(adminPage, `view-${name.toLowerCase().replace(' ', '-')}`);
    await adminPage.evaluate(axeSource); // evaluated by the browser's debugger, not a page script: CSP holds
    const result = await adminPage.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
    for (const v of result.violations.filter((x) => x.impact === 'serious' || x.impact === 'critical')) {
      found.push(`${name}: ${v.id} (${v.impact}) at ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
    }
  }
  if (found.length) throw new Error(found.join('; '));
});

await check('no page broke its Content-Security-Policy or threw', async () => {
  if (problems.length) throw new Error(problems.join('; '));
});

await browser.close();
finish();
