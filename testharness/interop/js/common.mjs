// common.mjs — what the JS SDK client scripts (client-*.mjs) share: their
// output protocol (one JSON object per line and step) and small helpers
// over the official SDK's types.
import { randomUUID } from 'node:crypto';
import { SendMessageRequest, TaskState, taskStateToJSON } from '@a2a-js/sdk';

// authFetch returns a fetch that adds "Authorization: Bearer <token>" when
// a token is given, and calls onRequest(method, path) for each request.
export const authFetch = (token, onRequest) => (input, init = {}) => {
  const headers = new Headers(init.headers ?? {});
  if (token) headers.set('Authorization', `Bearer ${token}`);
  if (onRequest) {
    const url = new URL(input instanceof Request ? input.url : String(input));
    onRequest(init.method ?? 'GET', url.pathname);
  }
  return fetch(input, { ...init, headers });
};

// report writes one step's outcome as a JSON line.
export const report = (step, ok, detail = {}) => {
  process.stdout.write(JSON.stringify({ step, ok, ...detail }) + '\n');
};

// makeStep returns step(name, fn): it runs one check and reports its
// result, or the exception it threw as a failed step, described by
// describe.
export const makeStep =
  (describe = (err) => ({ error: String(err?.message ?? err) })) =>
  async (name, fn) => {
    try {
      const detail = await fn();
      report(name, true, detail);
      return detail;
    } catch (err) {
      report(name, false, describe(err));
      return undefined;
    }
  };

// request builds a SendMessageRequest with one text part.
export const request = (text, configuration) =>
  SendMessageRequest.fromJSON({
    message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] },
    ...(configuration ? { configuration } : {}),
  });

export const isTask = (r) => r && typeof r.id === 'string' && r.status !== undefined;
export const stateOf = (t) => taskStateToJSON(t.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);
export const textOf = (parts) =>
  (parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
