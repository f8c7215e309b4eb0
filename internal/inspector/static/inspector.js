// A2A Inspector: a small script on server-rendered pages. No build step and
// no dependencies. The pages work without it (they are plain HTML); it adds
// the live parts:
//
//  - the task list and a task's page follow the live feed (/inspector/api/events,
//    server-sent events) and swap in fragments the server renders;
//  - sending, cancelling and answering go through the agent's own JSON-RPC
//    endpoint (SendStreamingMessage, CancelTask), read as an SSE stream with
//    fetch, exactly like any A2A client; sending to a configured peer goes
//    through /inspector/api/peers/{name}/send (the a2a_call tool);
//  - the overview polls /inspector/api/metrics and draws small charts.
'use strict';

(() => {
  // The inspector's own path: /inspector/, or an agent's /agents/{id}/inspector/.
  const BASE = document.body?.dataset.base || '/inspector/';
  const body = document.body;
  const page = body.dataset.page;
  const RPC = body.dataset.rpc || '/';
  const CSRF = { 'X-A2A-Inspector': '1' };
  const DONE = new Set(['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED']);
  const WAITING = new Set(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED']);

  // ---- small helpers ------------------------------------------------------

  const $ = (sel, root = document) => root.querySelector(sel);

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('data-')) e.setAttribute(k, v);
      else e.setAttribute(k, v);
    }
    for (const c of children) {
      if (c === undefined || c === null || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  const bare = (s) => (s || '').replace(/^TASK_STATE_/, '');
  const stateName = (s) => bare(s).replace(/_/g, ' ').toLowerCase();
  const stateClass = (s) => 'st-' + bare(s).replace(/_/g, '-').toLowerCase();
  const badge = (s) => el('span', { class: 'badge ' + stateClass(s) }, stateName(s));
  const clockMS = (d) => d.toTimeString().slice(0, 8) + '.' + String(d.getMilliseconds()).padStart(3, '0');
  const short = (id) => (id && id.length > 13 ? id.slice(0, 8) + '…' : id || '');

  // A UUID v4 from getRandomValues (randomUUID needs a secure context).
  function newId() {
    const b = new Uint8Array(16);
    crypto.getRandomValues(b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }

  // Server-rendered times are UTC; show them in the reader's time zone.
  function localTimes(root) {
    const today = new Date().toDateString();
    root.querySelectorAll('time[datetime]').forEach((t) => {
      const d = new Date(t.dateTime);
      if (isNaN(d) || d.getUTCFullYear() < 2000) return;
      t.title = d.toISOString();
      t.textContent = d.toDateString() === today ? d.toLocaleTimeString() : d.toLocaleString();
    });
  }

  function partsText(parts) {
    return (parts || []).map((p) => {
      if (typeof p.text === 'string') return p.text;
      if (p.raw !== undefined) return `[file ${p.filename || ''} ${p.mediaType || ''} ${Math.floor((p.raw.length * 3) / 4)} bytes]`.replace(/\s+/g, ' ');
      if (p.url !== undefined) return `[file link ${p.url}]`;
      if (p.data !== undefined) return JSON.stringify(p.data);
      return '';
    }).join('\n');
  }

  // ---- JSON-RPC and server-sent events -------------------------------------

  let rpcSeq = 0;
  const rpcHeaders = (accept) => ({ 'Content-Type': 'application/json', 'A2A-Version': '1.0', Accept: accept });
  const envelope = (method, params) => JSON.stringify({ jsonrpc: '2.0', id: ++rpcSeq, method, params });

  function rpcError(e) {
    const err = new Error(`${e.message || 'error'} (${e.code})`);
    err.code = e.code;
    return err;
  }

  async function rpc(method, params) {
    const res = await fetch(RPC, { method: 'POST', headers: rpcHeaders('application/json'), body: envelope(method, params), credentials: 'same-origin' });
    const j = await res.json().catch(() => null);
    if (!j) throw new Error(`HTTP ${res.status} from the A2A endpoint`);
    if (j.error) throw rpcError(j.error);
    return j.result;
  }

  // readSSE calls onEvent(name, data) for each event of a text/event-stream body.
  async function readSSE(res, onEvent) {
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      buf = buf.replace(/\r\n?/g, '\n');
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        let name = 'message';
        const data = [];
        for (const line of block.split('\n')) {
          if (line === '' || line.startsWith(':')) continue;
          const c = line.indexOf(':');
          const field = c < 0 ? line : line.slice(0, c);
          let v = c < 0 ? '' : line.slice(c + 1);
          if (v.startsWith(' ')) v = v.slice(1);
          if (field === 'event') name = v;
          else if (field === 'data') data.push(v);
        }
        if (data.length) onEvent(name, data.join('\n'));
      }
    }
  }

  // streamRPC runs a streaming JSON-RPC method; onResult gets each
  // StreamResponse, onError each JSON-RPC error.
  async function streamRPC(method, params, onResult, onError, signal) {
    const res = await fetch(RPC, { method: 'POST', headers: rpcHeaders('text/event-stream'), body: envelope(method, params), signal, credentials: 'same-origin' });
    const type = res.headers.get('Content-Type') || '';
    if (!type.startsWith('text/event-stream')) {
      const j = await res.json().catch(() => null);
      onError(j && j.error ? j.error : { code: res.status, message: `HTTP ${res.status}` });
      return;
    }
    await readSSE(res, (_name, data) => {
      let j;
      try { j = JSON.parse(data); } catch { onError({ code: -32700, message: 'unreadable event: ' + data }); return; }
      if (j.error) onError(j.error);
      else onResult(j.result || j);
    });
  }

  // ---- the live task feed ---------------------------------------------------

  function startFeed(onTask, onResync) {
    const status = $('#feed-status');
    const show = (state, text) => { if (status) { status.dataset.state = state; status.textContent = text; } };
    const es = new EventSource(BASE + 'api/events');
    es.addEventListener('open', () => show('live', 'live'));
    es.addEventListener('error', () => show('down', 'reconnecting…'));
    es.addEventListener('task', (e) => { try { onTask(JSON.parse(e.data)); } catch { /* ignore a bad event */ } });
    es.addEventListener('resync', () => onResync());
    window.addEventListener('pagehide', () => es.close());
    return es;
  }

  // ---- the stream log (send page, task page) ----------------------------------

  class StreamLog {
    constructor(id) {
      this.list = document.getElementById(id);
      this.status = document.getElementById(id + '-status');
      this.count = 0;
    }
    clear() { this.list.replaceChildren(); this.count = 0; }
    say(text) { if (this.status) this.status.textContent = text; }
    add(kind, label, state, text, raw) {
      this.count++;
      const li = el('li', { class: 'event', 'data-kind': kind, 'data-state': state || '' },
        el('span', { class: 'ev-time', title: new Date().toISOString() }, clockMS(new Date())),
        el('span', {}, el('span', { class: 'ev-kind' }, label), state ? ' ' : '', state ? badge(state) : ''),
        el('div', { class: 'ev-body' },
          text ? el('p', { class: 'ev-text' }, text) : '',
          raw ? el('details', {}, el('summary', {}, 'event JSON'), el('pre', { class: 'json' }, JSON.stringify(raw, null, 2))) : ''));
      this.list.append(li);
      li.scrollIntoView({ block: 'nearest' });
      return li;
    }
    // event describes one A2A StreamResponse and returns {taskId, contextId, state, text}.
    event(r) {
      if (r.task) {
        const t = r.task;
        const msg = t.status && t.status.message ? partsText(t.status.message.parts) : '';
        this.add('task', 'Task', t.status && t.status.state, `task ${t.id}\ncontext ${t.contextId}` + (msg ? `\n${msg}` : ''), r);
        return { taskId: t.id, contextId: t.contextId, state: t.status && t.status.state, text: msg };
      }
      if (r.statusUpdate) {
        const u = r.statusUpdate;
        const msg = u.status && u.status.message ? partsText(u.status.message.parts) : '';
        this.add('status', 'Status', u.status.state, msg, r);
        return { taskId: u.taskId, contextId: u.contextId, state: u.status.state, text: msg };
      }
      if (r.artifactUpdate) {
        const u = r.artifactUpdate;
        const a = u.artifact || {};
        const flags = [u.append ? 'appended' : '', u.lastChunk ? 'last chunk' : ''].filter(Boolean).join(', ');
        this.add('artifact', `Artifact ${a.name || a.artifactId || ''}${flags ? ' (' + flags + ')' : ''}`, '', partsText(a.parts), r);
        return { taskId: u.taskId, contextId: u.contextId };
      }
      if (r.message) {
        const m = r.message;
        this.add('message', `Message from ${(m.role || '').replace(/^ROLE_/, '').toLowerCase()}`, '', partsText(m.parts), r);
        return { taskId: m.taskId, contextId: m.contextId, state: 'MESSAGE', text: partsText(m.parts) };
      }
      this.add('other', 'Event', '', '', r);
      return {};
    }
    error(e) { this.add('error', `Error ${e.code}`, '', e.message || String(e), e); }
  }

  // ---- send page ---------------------------------------------------------------

  function sendPage() {
    const form = $('#send-form');
    const log = new StreamLog('stream-events');
    const answer = $('#answer-form');
    const cancelBtn = $('#stream-cancel');
    const stopBtn = $('#stream-stop');
    const sendBtn = $('#send-button');
    // The select's value for this agent is '', which no peer's name can be:
    // a peer may well be named "self" (make run configures one).
    const SELF = '';
    const cur = { taskId: '', contextId: '', state: '', question: '', target: SELF, abort: null };

    function setFacts() {
      const t = $('#stream-task');
      t.replaceChildren(cur.taskId && cur.target === SELF ? el('a', { href: BASE + 'tasks/' + encodeURIComponent(cur.taskId) }, el('code', {}, cur.taskId)) : (cur.taskId ? el('code', {}, cur.taskId) : '—'));
      $('#stream-context').replaceChildren(cur.contextId ? el('code', {}, cur.contextId) : '—');
      const s = $('#stream-state');
      s.dataset.state = cur.state || '';
      s.replaceChildren(cur.state && cur.state !== 'MESSAGE' ? badge(cur.state) : (cur.state === 'MESSAGE' ? 'direct message (no task)' : '—'));
      cancelBtn.disabled = !(cur.target === SELF && cur.taskId && !DONE.has(cur.state) && cur.state !== 'MESSAGE');
    }

    function track(info) {
      if (info.taskId) cur.taskId = info.taskId;
      if (info.contextId) cur.contextId = info.contextId;
      if (info.state) cur.state = info.state;
      if (WAITING.has(cur.state) && info.text) cur.question = info.text;
      setFacts();
    }

    function ask(question) {
      answer.hidden = false;
      $('#answer-question').textContent = question ? `The agent asks: ${question}` : 'The agent is waiting for input.';
      $('#answer-text').focus();
    }

    function begin(target) {
      if (cur.abort) cur.abort.abort();
      cur.abort = new AbortController();
      cur.target = target;
      answer.hidden = true;
      sendBtn.disabled = true;
      stopBtn.disabled = false;
      return cur.abort.signal;
    }

    function end(signal) {
      if (cur.abort && cur.abort.signal !== signal) return; // a newer send took over
      sendBtn.disabled = false;
      stopBtn.disabled = true;
      cur.abort = null;
      const s = cur.state;
      if (DONE.has(s)) log.say(`Finished: ${stateName(s)}.`);
      else if (WAITING.has(s)) { log.say(`The agent waits: ${stateName(s)}. Answer below.`); ask(cur.question); }
      else if (s === 'MESSAGE') log.say('The agent answered with a message.');
      else log.say('The stream ended.');
      setFacts();
    }

    async function sendSelf(text, taskId, contextId) {
      const signal = begin(SELF);
      const message = { messageId: newId(), role: 'ROLE_USER', parts: [{ text }] };
      if (taskId) message.taskId = taskId;
      if (contextId) message.contextId = contextId;
      log.add('sent', 'Sent SendStreamingMessage', '', text, { message });
      log.say('Streaming…');
      try {
        await streamRPC('SendStreamingMessage', { message }, (r) => track(log.event(r)), (e) => log.error(e), signal);
      } catch (e) {
        if (e.name !== 'AbortError') log.error({ code: 'network', message: String(e.message || e) });
      }
      end(signal);
    }

    async function sendPeer(peer, text, taskId, contextId) {
      const signal = begin(peer);
      const req = { message: text };
      if (taskId) req.task_id = taskId;
      if (contextId) req.context_id = contextId;
      log.add('sent', `Sent to peer ${peer} (a2a_call)`, '', text, req);
      log.say(`Calling ${peer}…`);
      try {
        const res = await fetch(`${BASE}api/peers/${encodeURIComponent(peer)}/send`, {
          method: 'POST', signal, credentials: 'same-origin',
          headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', ...CSRF }, body: JSON.stringify(req),
        });
        if (!res.ok) {
          const j = await res.json().catch(() => ({}));
          log.error({ code: res.status, message: j.error || res.statusText });
        } else {
          await readSSE(res, (name, data) => {
            const d = JSON.parse(data);
            if (name === 'progress') log.add('progress', 'Progress', '', d.message, d);
            else if (name === 'error') log.error({ code: 'tool', message: d.message });
            else if (name === 'result') {
              const o = d.outcome || {};
              let st = o.state || '';
              if (st && st !== 'MESSAGE' && !st.startsWith('TASK_STATE_')) st = 'TASK_STATE_' + st;
              log.add(d.is_error ? 'error' : 'result', d.is_error ? 'a2a_call failed' : 'a2a_call result', st, d.text || d.content, d);
              track({ taskId: o.task_id, contextId: o.context_id, state: st || (d.is_error ? '' : cur.state), text: d.content });
            }
          });
        }
      } catch (e) {
        if (e.name !== 'AbortError') log.error({ code: 'network', message: String(e.message || e) });
      }
      end(signal);
    }

    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const text = $('#send-text').value.trim();
      if (!text) return;
      const to = $('#send-to').value;
      const taskId = $('#send-task').value.trim();
      const contextId = $('#send-context').value.trim();
      log.clear();
      cur.taskId = taskId; cur.contextId = contextId; cur.state = ''; cur.question = '';
      if (to === SELF) sendSelf(text, taskId, contextId);
      else sendPeer(to, text, taskId, contextId);
    });

    answer.addEventListener('submit', (e) => {
      e.preventDefault();
      const text = $('#answer-text').value.trim();
      if (!text) return;
      $('#answer-text').value = '';
      answer.hidden = true;
      if (cur.target === SELF) sendSelf(text, cur.taskId, cur.contextId);
      else sendPeer(cur.target, text, cur.taskId, cur.contextId);
    });

    cancelBtn.addEventListener('click', async () => {
      cancelBtn.disabled = true;
      log.add('sent', 'Sent CancelTask', '', `task ${cur.taskId}`, { id: cur.taskId });
      try {
        const t = await rpc('CancelTask', { id: cur.taskId });
        track({ taskId: t.id, contextId: t.contextId, state: t.status.state });
      } catch (e) {
        log.error({ code: e.code || 'network', message: e.message });
        setFacts();
      }
    });

    stopBtn.addEventListener('click', () => { if (cur.abort) cur.abort.abort(); log.say('Stopped watching; the task goes on.'); });
    setFacts();
  }

  // ---- task list ---------------------------------------------------------------

  function tasksPage() {
    const table = $('#task-table');
    const filter = new URLSearchParams(table.dataset.query || '');
    const announce = $('#list-announce');
    let timer = null;
    let last = null;

    async function refresh() {
      timer = null;
      const q = new URLSearchParams(location.search);
      q.set('fragment', 'rows');
      const res = await fetch(BASE + 'tasks?' + q.toString(), { credentials: 'same-origin' });
      if (!res.ok) return;
      const tpl = document.createElement('template');
      tpl.innerHTML = await res.text();
      const fresh = tpl.content.querySelector('tbody');
      const old = $('#task-rows');
      if (!fresh || !old) return;
      const before = new Map([...old.querySelectorAll('tr[data-task-id]')].map((r) => [r.dataset.taskId, r.dataset.state]));
      fresh.querySelectorAll('tr[data-task-id]').forEach((r) => {
        if (before.get(r.dataset.taskId) !== r.dataset.state) r.classList.add('fresh');
      });
      localTimes(fresh);
      old.replaceWith(fresh);
      if (last && announce) announce.textContent = `Task ${short(last.taskId)} from ${last.peer} is now ${stateName(last.state)}.`;
    }

    const schedule = () => { if (!timer) timer = setTimeout(refresh, 200); };
    startFeed((ev) => {
      if (filter.get('peer') && filter.get('peer') !== ev.peer) return;
      if (filter.get('context') && filter.get('context') !== ev.contextId) return;
      last = ev;
      schedule();
    }, schedule);
  }

  // ---- one task ----------------------------------------------------------------

  function taskPage() {
    const actions = $('#task-actions');
    const id = actions.dataset.taskId;
    const contextId = actions.dataset.contextId;
    const status = $('#action-status');
    const cancelBtn = $('#cancel-task');
    const reply = $('#reply-form');
    const log = new StreamLog('reply-events');
    let timer = null;

    function applyState(state) {
      cancelBtn.hidden = DONE.has(state);
      reply.hidden = !WAITING.has(state);
    }

    async function refresh() {
      timer = null;
      const res = await fetch(`${BASE}tasks/${encodeURIComponent(id)}?fragment=body`, { credentials: 'same-origin' });
      if (!res.ok) return;
      const box = $('#task-body');
      box.innerHTML = await res.text();
      const facts = $('#task-facts', box);
      if (facts) { box.dataset.state = facts.dataset.state; applyState(facts.dataset.state); }
      localTimes(box);
    }
    const schedule = () => { if (!timer) timer = setTimeout(refresh, 150); };
    startFeed((ev) => { if (ev.taskId === id) schedule(); }, schedule);

    cancelBtn.addEventListener('click', async () => {
      cancelBtn.disabled = true;
      status.textContent = 'Cancelling…';
      try {
        const t = await rpc('CancelTask', { id });
        status.textContent = `CancelTask answered: ${stateName(t.status.state)}.`;
        applyState(t.status.state);
        schedule();
      } catch (e) {
        status.textContent = `CancelTask failed: ${e.message}`;
      }
      cancelBtn.disabled = false;
    });

    reply.addEventListener('submit', async (e) => {
      e.preventDefault();
      const text = $('#reply-text').value.trim();
      if (!text) return;
      $('#reply-text').value = '';
      reply.hidden = true;
      $('#reply-stream-wrap').hidden = false;
      log.clear();
      const message = { messageId: newId(), role: 'ROLE_USER', parts: [{ text }], taskId: id, contextId };
      log.add('sent', 'Sent SendStreamingMessage', '', text, { message });
      log.say('Streaming…');
      try {
        await streamRPC('SendStreamingMessage', { message }, (r) => log.event(r), (err) => log.error(err));
        log.say('The stream ended.');
      } catch (err) {
        log.error({ code: 'network', message: String(err.message || err) });
      }
      schedule();
    });
  }

  // ---- overview: metrics charts ---------------------------------------------------

  function overviewPage() {
    const charts = $('#charts');
    if (!charts) return;
    const NS = 'http://www.w3.org/2000/svg';
    const fmt = (v, rate) => (rate ? (v >= 10 ? v.toFixed(0) : v.toFixed(v >= 1 ? 1 : 2)) : String(Math.round(v)));

    function series(samples) {
      const out = { inRate: [], outRate: [], errRate: [], activeTasks: [], streams: [] };
      for (let i = 0; i < samples.length; i++) {
        const s = samples[i];
        out.activeTasks.push(s.activeTasks);
        out.streams.push(s.streams);
        if (i === 0) continue;
        const p = samples[i - 1];
        const dt = Math.max((new Date(s.t) - new Date(p.t)) / 1000, 0.001);
        out.inRate.push(Math.max(0, (s.inRequests - p.inRequests) / dt));
        out.outRate.push(Math.max(0, (s.outCalls - p.outCalls) / dt));
        out.errRate.push(Math.max(0, (s.inErrors - p.inErrors + s.outErrors - p.outErrors) / dt));
      }
      return out;
    }

    function draw(svg, values) {
      const w = 200, h = 48, pad = 2;
      const max = Math.max(1, ...values);
      const n = values.length;
      const pts = values.map((v, i) => [n === 1 ? w : (i / (n - 1)) * w, h - pad - (v / max) * (h - 2 * pad)]);
      const line = pts.map((p) => p[0].toFixed(1) + ',' + p[1].toFixed(1)).join(' ');
      const area = document.createElementNS(NS, 'polygon');
      area.setAttribute('class', 'area');
      area.setAttribute('points', n ? `0,${h} ${line} ${w},${h}` : '');
      const pl = document.createElementNS(NS, 'polyline');
      pl.setAttribute('class', 'line');
      pl.setAttribute('points', line);
      svg.replaceChildren(area, pl);
    }

    function totals(s) {
      const dl = $('#totals');
      const items = [['Inbound requests', s.inRequests], ['Inbound errors', s.inErrors], ['Outbound calls', s.outCalls], ['Outbound errors', s.outErrors],
        ['Webhooks delivered', s.pushDelivered], ['Rate-limited', s.rateLimited]];
      for (const [state, v] of Object.entries(s.finished || {})) items.push([`Tasks ${stateName(state)}`, v]);
      dl.replaceChildren(...items.map(([k, v]) => el('div', {}, el('dt', {}, k), el('dd', {}, String(Math.round(v))))));
    }

    function peers(rows) {
      const tb = $('#peer-figures tbody');
      if (!rows || !rows.length) return;
      tb.replaceChildren(...rows.map((r) => el('tr', {},
        el('td', {}, r.direction), el('th', { scope: 'row' }, r.peer), el('td', { class: 'num' }, String(r.calls)), el('td', { class: 'num' }, String(r.errors)),
        el('td', { class: 'num' }, r.p50ms.toFixed(1) + ' ms'), el('td', { class: 'num' }, r.p99ms.toFixed(1) + ' ms'),
        el('td', {}, r.lastCall && !r.lastCall.startsWith('0001') ? new Date(r.lastCall).toLocaleTimeString() : '—'))));
    }

    async function poll() {
      if (document.visibilityState !== 'hidden') {
        try {
          const res = await fetch(BASE + 'api/metrics', { credentials: 'same-origin' });
          const j = await res.json();
          const samples = j.samples || [];
          const ser = series(samples);
          charts.querySelectorAll('figure[data-series]').forEach((f) => {
            const key = f.dataset.series;
            const vals = ser[key];
            const rate = key.endsWith('Rate');
            const latest = vals.length ? vals[vals.length - 1] : 0;
            f.querySelector('output').textContent = fmt(latest, rate);
            const svg = f.querySelector('svg');
            svg.setAttribute('aria-label', `${f.querySelector('figcaption').textContent.trim()}: now ${fmt(latest, rate)}, peak ${fmt(Math.max(0, ...vals), rate)} over the last ${vals.length} samples`);
            draw(svg, vals);
          });
          if (samples.length) totals(samples[samples.length - 1]);
          if (samples.length > 1) {
            const secs = Math.round((new Date(samples[samples.length - 1].t) - new Date(samples[0].t)) / 1000);
            $('#metrics-note').textContent = `Sampled while a page is open: ${samples.length} samples over the last ${secs} s.`;
          }
          peers(j.peers);
        } catch { /* the next poll tries again */ }
      }
      setTimeout(poll, 1000);
    }
    poll();
  }

  // ---- start --------------------------------------------------------------------

  localTimes(document);
  if (page === 'send') sendPage();
  else if (page === 'tasks') tasksPage();
  else if (page === 'task') taskPage();
  else if (page === 'overview') overviewPage();
})();
