// Drives a running Parley hub through its A2A surface with the official A2A JavaScript SDK
// (@a2a-js/sdk, A2A v1.0): agent card discovery, SendMessage, SendStreamingMessage, GetTask,
// ListTasks, SubscribeToTask, CancelTask and push-notification configs, over JSON-RPC and
// HTTP+JSON; and with the SDK's A2A 0.3 release (0.3.14): streams and their refusals. The agent's side is a Parley node moving its task over the REST API, as any
// worker would. Usage: node a2a.mjs <hub url> <admin token>. Prints "N passed, M failed".
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { Message, TaskState } from '@a2a-js/sdk';
// The A2A 0.3 JavaScript SDK (@a2a-js/sdk 0.3.14, under an npm alias): what a v0.3 client sees.
import {
  ClientFactory as ClientFactoryV03,
  ClientFactoryOptions as ClientFactoryOptionsV03,
  DefaultAgentCardResolver as DefaultAgentCardResolverV03,
  JsonRpcTransportFactory as JsonRpcTransportFactoryV03,
} from 'a2a-js-sdk-v03/client';
import { randomUUID } from 'node:crypto';
import { check, finish } from '../checks.mjs';

const [hubUrl, adminToken] = process.argv.slice(2);
if (!hubUrl || !adminToken) {
  console.error('usage: node a2a.mjs <hub url> <admin token>');
  process.exit(2);
}

function assert(condition, message) {
  if (!condition) throw new Error(message);
}
function equal(actual, expected, what) {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }
}

// The first truthy answer of probe(), polled: how soon it comes is the machine's business, so
// the patience is the Java tests' (30 s), a bound for a hung hub and not a measure.
async function eventually(what, probe, patienceMs = 30_000) {
  const deadline = Date.now() + patienceMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${patienceMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// ---- Parley REST, for setting up nodes and for the assignee's side of the task
async function parley(method, path, token, body) {
  const res = await fetch(hubUrl + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}
async function node(id, parent) {
  const r = await parley('POST', '/v1/nodes', adminToken, { id, kind: 'external', parent });
  assert(r.status === 201, `creating ${id}: ${JSON.stringify(r)}`);
  return r.json.token;
}
async function taskEvent(token, taskId, event) {
  const r = await parley('POST', `/v1/tasks/${taskId}/events`, token, event);
  assert(r.status === 200, `task event ${event.type}: ${JSON.stringify(r)}`);
}

// ---- the SDK, with the caller's bearer on every request it makes
function authFetch(token) {
  return (url, init = {}) => fetch(url, { ...init, headers: { ...(init.headers ?? {}), Authorization: `Bearer ${token}` } });
}
async function client(token, agent, transport, polling = true) {
  const fetchImpl = authFetch(token);
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    preferredTransports: [transport],
    clientConfig: { polling },
  }));
  return factory.createFromUrl(`${hubUrl}/a2a/${agent}/`);
}
function userMessage(text, extra = {}) {
  return Message.fromJSON({ messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra });
}
function kinds(events) {
  return events.map((e) => {
    switch (e.payload?.$case) {
      case 'task': return `task:${TaskState[e.payload.value.status.state]}`;
      case 'statusUpdate': return `status:${TaskState[e.payload.value.status.state]}`;
      case 'artifactUpdate': return `artifact:${e.payload.value.artifact.artifactId}`;
      default: return `other:${e.payload?.$case}`;
    }
  });
}

const run = randomUUID().slice(0, 8);
const leadId = `js-lead-${run}`;
const workerId = `js-worker-${run}`;
const strangerId = `js-stranger-${run}`;
const lead = await node(leadId, null);
const worker = await node(workerId, leadId);
const stranger = await node(strangerId, null);

console.log(`a2a-js: @a2a-js/sdk against ${hubUrl}`);

for (const transport of ['JSONRPC', 'HTTP+JSON']) {
  await check(`${transport}: the card resolves and the client speaks A2A 1.0`, async () => {
    const c = await client(lead, workerId, transport);
    equal(c.protocolVersion, '1.0', 'protocol version');
    const card = c.agentCard;
    equal(card.name, workerId, 'card name');
    assert(card.capabilities.streaming && card.capabilities.pushNotifications, 'streaming and push declared');
    assert(card.supportedInterfaces.some((i) => i.protocolBinding === 'HTTP+JSON' && i.protocolVersion === '1.0'),
      'an HTTP+JSON 1.0 interface');
    assert(card.capabilities.extensions.some((x) => x.uri === 'https://parley.dev/ext/node-kind/v1'
      && x.params.kind === 'external'), 'the node-kind extension');
    assert('parleyBearer' in card.securitySchemes, 'the bearer scheme');
  });

  await check(`${transport}: send creates a Parley task; get follows the assignee to completion`, async () => {
    const c = await client(lead, workerId, transport);
    const message = userMessage(`build ${transport}`, { parts: [{ text: `build ${transport}` }, { data: { target: 'all' } }] });
    const task = await c.sendMessage({ message });
    equal(TaskState[task.status.state], 'TASK_STATE_SUBMITTED', 'state after send');
    const parleyTask = await parley('GET', `/v1/tasks/${task.id}`, lead);
    equal(parleyTask.json.assignee, workerId, 'assignee');
    equal(parleyTask.json.input.data, { target: 'all' }, 'data part as input data');
    equal(parleyTask.json.input.a2a.messageId, message.messageId, 'messageId kept');
    const again = await c.sendMessage({ message });
    equal(again.id, task.id, 'the same messageId is the same task');
    await taskEvent(worker, task.id, { type: 'accept' });
    equal(TaskState[(await c.getTask({ id: task.id })).status.state], 'TASK_STATE_WORKING', 'accepted is working');
    await taskEvent(worker, task.id, { type: 'complete', result: { ok: true },
      artifacts: [{ uri: 'https://example.org/out.tar', mediaType: 'application/x-tar' }] });
    const done = await c.getTask({ id: task.id, historyLength: 5 });
    equal(TaskState[done.status.state], 'TASK_STATE_COMPLETED', 'final state');
    equal(done.artifacts.map((a) => a.artifactId), ['result', 'artifact-1'], 'artifacts');
    equal(done.artifacts[1].parts[0].content, { $case: 'url', value: 'https://example.org/out.tar' }, 'file artifact');
    equal(done.history.length, 1, 'history holds the message');
    const listed = await c.listTasks({ status: TaskState.TASK_STATE_COMPLETED, pageSize: 50 });
    assert(listed.tasks.some((t) => t.id === task.id), 'ListTasks finds it');
  });

  await check(`${transport}: a streamed send emits the task then each change in order`, async () => {
    const c = await client(lead, workerId, transport);
    const events = [];
    const stream = c.sendMessageStream({ message: userMessage(`stream ${transport}`) });
    for await (const event of stream) {
      events.push(event);
      if (events.length === 1) {
        const id = event.payload.value.id;
        await taskEvent(worker, id, { type: 'accept' });
        await taskEvent(worker, id, { type: 'update', progress: { percent: 50 } });
        await taskEvent(worker, id, { type: 'complete', result: 'green' });
      }
    }
    equal(kinds(events), ['task:TASK_STATE_SUBMITTED', 'status:TASK_STATE_WORKING', 'status:TASK_STATE_WORKING',
      'artifact:result', 'status:TASK_STATE_COMPLETED'], 'stream');
  });

  await check(`${transport}: subscribe follows a running task; the creator cancels it`, async () => {
    const c = await client(lead, workerId, transport);
    const task = await c.sendMessage({ message: userMessage(`cancel me ${transport}`) });
    await taskEvent(worker, task.id, { type: 'accept' });
    const events = [];
    for await (const event of c.resubscribeTask({ id: task.id })) {
      events.push(event);
      if (events.length === 1) {
        const canceled = await c.cancelTask({ id: task.id });
        equal(TaskState[canceled.status.state], 'TASK_STATE_CANCELED', 'cancel answer');
      }
    }
    equal(kinds(events), ['task:TASK_STATE_WORKING', 'status:TASK_STATE_CANCELED'], 'subscription');
    equal((await parley('GET', `/v1/tasks/${task.id}`, lead)).json.state, 'canceled', 'Parley task state');
    let error;
    try {
      await c.cancelTask({ id: 'no-such-task' });
    } catch (e) {
      error = e;
    }
    assert(error && error.name === 'TaskNotFoundError', `cancel of an unknown task: ${error}`);
  });

  await check(`${transport}: push configs are created, listed, read and deleted`, async () => {
    const c = await client(lead, workerId, transport);
    const task = await c.sendMessage({ message: userMessage(`push ${transport}`) });
    const created = await c.createTaskPushNotificationConfig({ taskId: task.id, id: 'cfg', url: 'http://127.0.0.1:9/hook',
      token: 'a-token-of-sixteen-chars', authentication: { scheme: 'Bearer', credentials: 'secret' }, tenant: '' });
    equal(created.id, 'cfg', 'config id');
    equal((await c.getTaskPushNotificationConfig({ taskId: task.id, id: 'cfg', tenant: '' })).url,
      'http://127.0.0.1:9/hook', 'config url');
    equal((await c.listTaskPushNotificationConfig({ taskId: task.id, pageSize: 0, pageToken: '', tenant: '' }))
      .configs.length, 1, 'configs listed');
    await c.deleteTaskPushNotificationConfig({ taskId: task.id, id: 'cfg', tenant: '' });
    equal((await c.listTaskPushNotificationConfig({ taskId: task.id, pageSize: 0, pageToken: '', tenant: '' }))
      .configs.length, 0, 'configs after delete');
  });

  await check(`${transport}: the ACL refuses a node outside the agent's group`, async () => {
    const c = await client(stranger, workerId, transport);
    let error;
    try {
      await c.sendMessage({ message: userMessage('let me in') });
    } catch (e) {
      error = e;
    }
    assert(error, 'the send was accepted');
    assert(/acl/.test(String(error.message)), `not an ACL refusal: ${error}`);
  });
}

await check('JSONRPC: a blocking send returns once the assignee finished', async () => {
  const c = await client(lead, workerId, 'JSONRPC', false);
  const message = userMessage('blocking');
  const pending = c.sendMessage({ message });
  const taskId = await eventually('the worker sees the task', async () => {
    const inbox = await parley('GET', '/v1/inbox?after=0&limit=1000', worker);
    return inbox.json.items.find((e) => e.kind === 'task' && e.data.input.a2a.messageId === message.messageId)?.corrId;
  });
  await taskEvent(worker, taskId, { type: 'accept' });
  await taskEvent(worker, taskId, { type: 'fail', reason: 'disk full' });
  const task = await pending;
  equal(TaskState[task.status.state], 'TASK_STATE_FAILED', 'blocking result');
  equal(task.status.message.parts[0].content, { $case: 'text', value: 'disk full' }, 'failure reason');
});

// ---- A2A 0.3: the v0.3 SDK's client (no A2A-Version header, the v0.3 card and JSON-RPC methods)
async function clientV03(token, agent) {
  const fetchImpl = authFetch(token);
  const factory = new ClientFactoryV03(ClientFactoryOptionsV03.createFrom(ClientFactoryOptionsV03.default, {
    transports: [new JsonRpcTransportFactoryV03({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolverV03({ fetchImpl }),
  }));
  return factory.createFromUrl(`${hubUrl}/a2a/${agent}/`);
}
function userMessageV03(text) {
  return { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] };
}
/** Drains a stream the hub must refuse; the error the SDK reports. */
async function refusedStream(stream) {
  try {
    for await (const event of stream) {
      throw new Error(`the stream was not refused: ${JSON.stringify(event)}`);
    }
  } catch (e) {
    return e;
  }
  throw new Error('the stream ended without an error');
}
/** The v0.3 SDK names the JSON-RPC error it read from the stream, not the transport it did not expect. */
function refusedWith(error, code, words) {
  const said = String(error && error.message);
  assert(!/Content-Type/.test(said), `the SDK could not read the refusal: ${said}`);
  assert(said.includes(`(Code: ${code})`), `expected JSON-RPC error ${code}: ${said}`);
  assert(words.test(said), `expected ${words}: ${said}`);
}

await check('JSONRPC 0.3: a streamed send emits the task then each change in order', async () => {
  const c = await clientV03(lead, workerId);
  const kindsSeen = [];
  for await (const event of c.sendMessageStream({ message: userMessageV03('stream 0.3') })) {
    kindsSeen.push(event.kind === 'status-update' ? `status:${event.status.state}` : event.kind);
    if (kindsSeen.length === 1) {
      await taskEvent(worker, event.id, { type: 'accept' });
      await taskEvent(worker, event.id, { type: 'complete', result: 'green' });
    }
  }
  equal(kindsSeen, ['task', 'status:working', 'artifact-update', 'status:completed'], 'stream');
});

await check('JSONRPC 0.3: refused streams carry the JSON-RPC error the SDK reports', async () => {
  refusedWith(await refusedStream((await clientV03(stranger, workerId)).sendMessageStream({
    message: userMessageV03('let me stream') })), -32000, /acl denied/);
  const c = await clientV03(lead, workerId);
  refusedWith(await refusedStream(c.resubscribeTask({ id: 'no-such-task' })), -32001, /does not exist/);
  const task = await c.sendMessage({ message: userMessageV03('finish me') });
  await taskEvent(worker, task.id, { type: 'accept' });
  await taskEvent(worker, task.id, { type: 'fail', reason: 'done already' });
  refusedWith(await refusedStream(c.resubscribeTask({ id: task.id })), -32004, /nothing left to subscribe to/);
});

finish();
