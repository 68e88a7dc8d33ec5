// The console's one way to the hub: the public /v1 API with the bearer token of this tab.
const KEY = 'parley.token';

export const session = {
  token: () => sessionStorage.getItem(KEY),
  set: (token) => sessionStorage.setItem(KEY, token),
  clear: () => sessionStorage.removeItem(KEY),
};

/** A refusal of the hub: its HTTP status and its {"error","message"} body. */
export class Refused extends Error {
  constructor(status, body) {
    super(body && body.message ? body.message : `HTTP ${status}`);
    this.status = status;
    this.code = body && body.error;
  }
}

/** 403 and 404 are the API's word that this token may not see or do it. */
export const notPermitted = (e) => e instanceof Refused && (e.status === 403 || e.status === 404);

function headers(json) {
  const h = { Authorization: `Bearer ${session.token()}` };
  if (json) h['Content-Type'] = 'application/json';
  return h;
}

/** Calls the API; answers the parsed JSON (or text), throws Refused for a 4xx/5xx. */
export async function api(path, { method = 'GET', body } = {}) {
  const res = await fetch(path, {
    method, headers: headers(body !== undefined), cache: 'no-store',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 204) return null;
  const json = (res.headers.get('content-type') || '').includes('json');
  const data = json ? await res.json() : await res.text();
  if (!res.ok) throw new Refused(res.status, json ? data : null);
  return data;
}

/**
 * Follows an SSE route with the bearer (EventSource cannot send one): onOpen() once the hub
 * answered (it follows from then on), onEvent(kind, data) per event, onComment(text) per
 * comment; resolves when the stream ends.
 */
export async function follow(path, { onOpen, onEvent, onComment }) {
  const res = await fetch(path, { headers: headers(false), cache: 'no-store' });
  if (!res.ok) throw new Refused(res.status, await res.json().catch(() => null));
  onOpen();
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let kind = 'message';
      const data = [];
      for (const line of frame.split('\n')) {
        if (line.startsWith(':')) onComment(line.slice(1).trim());
        else if (line.startsWith('event: ')) kind = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length) onEvent(kind, JSON.parse(data.join('\n')));
    }
  }
}
