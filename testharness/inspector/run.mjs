// Browser test of the plugin's inspector, driven by the Go test
// testharness/e2e/inspector (which starts the plugin and plays "another
// client"). Usage:
//
//   node run.mjs <agent base URL> <artifact dir>
//
// It launches Debian's Chromium (never a downloaded browser) headless with a
// fresh profile, walks through every main view, asserts in the page and
// saves a PNG screenshot per view into the artifact dir. Protocol with the
// Go test: lines on stdout ("step: …", "need: other-client-task", "done");
// answers on stdin ("task <id>"). Any failure exits non-zero with the reason
// on stderr.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const [base, outDir] = process.argv.slice(2);
if (!base || !outDir) {
  console.error('usage: node run.mjs <agent base URL> <artifact dir>');
  process.exit(2);
}
const insp = base.replace(/\/$/, '') + '/inspector/';
const WAIT = 15000;

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const say = (s) => console.log(s);
const step = (s) => say('step: ' + s);
function check(cond, msg) { if (!cond) throw new Error('assertion failed: ' + msg); }

const profile = mkdtempSync(join(tmpdir(), 'inspector-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1280, height: 900 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

// Problems the pages report: script errors, CSP violations, failed loads.
const problems = [];
function watch(page, name) {
  page.on('pageerror', (e) => problems.push(`${name}: script error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/net::ERR_ABORTED|ERR_INCOMPLETE_CHUNKED_ENCODING/.test(m.text())) problems.push(`${name}: console error: ${m.text()}`);
  });
  return page;
}

async function shot(page, name) {
  await page.screenshot({ path: join(outDir, name + '.png'), fullPage: true });
  say(`shot: ${name}.png`);
}

// a11y checks what every page must have: one h1, a main landmark, labelled
// controls, images with alt text, buttons with names, table headers.
async function a11y(page, name) {
  const issues = await page.evaluate(() => {
    const out = [];
    if (document.querySelectorAll('h1').length !== 1) out.push('want exactly one h1');
    if (!document.querySelector('main')) out.push('no main landmark');
    if (!document.querySelector('nav[aria-label]')) out.push('no labelled nav');
    for (const c of document.querySelectorAll('input, select, textarea')) {
      if (c.type === 'hidden') continue;
      if (!(c.labels && c.labels.length) && !c.getAttribute('aria-label')) out.push(`control #${c.id || c.name} has no label`);
    }
    for (const img of document.querySelectorAll('img')) if (!img.hasAttribute('alt')) out.push(`img ${img.src} has no alt`);
    for (const b of document.querySelectorAll('button, a.button')) if (!b.textContent.trim() && !b.getAttribute('aria-label')) out.push('a button has no name');
    for (const t of document.querySelectorAll('table')) if (!t.querySelector('th')) out.push(`table ${t.id} has no header cells`);
    return out;
  });
  check(issues.length === 0, `${name}: accessibility: ${issues.join('; ')}`);
}

const streamEvent = (list, kind, state) => `#${list} li.event[data-kind="${kind}"]` + (state ? `[data-state="${state}"]` : '');

// send fills the send page's form and submits it; to is the label of the
// option to pick ("This agent", "Peer: bob"), as a user picks it.
async function send(page, text, to = 'This agent') {
  await page.selectOption('#send-to', { label: to });
  await page.fill('#send-text', text);
  await page.click('#send-button');
}

let exitCode = 0;
try {
  // The overview stays open in its own tab for the whole run: its charts
  // sample the metrics while the other tab works.
  step('overview: the live Agent Card');
  const overview = watch(await context.newPage(), 'overview');
  await overview.goto(insp);
  await overview.waitForSelector('#card-name');
  const cardName = await overview.textContent('#card-name');
  check(cardName.includes('Alice'), `card name is ${cardName}`);
  check(await overview.isVisible('#skills tr[data-skill="web_search"]'), 'the web_search skill is listed');
  check(await overview.isVisible('#skills tr[data-skill="calendar_add"]'), 'the calendar_add skill is listed');
  check(!(await overview.isVisible('#skills tr[data-skill="a2a_call"]')), "the plugin's own a2a_call is not advertised");
  const headers = (await overview.request.get(insp)).headers();
  check((headers['content-security-policy'] || '').includes("default-src 'self'"), 'CSP header');
  check(headers['x-frame-options'] === 'DENY', 'X-Frame-Options DENY');
  await a11y(overview, 'overview');
  await overview.waitForFunction(() => document.querySelector('output[data-value="activeTasks"]').textContent !== '–', null, { timeout: WAIT });

  const page = watch(await context.newPage(), 'main');

  step('send: a message to this agent, streamed to completion');
  await page.goto(insp + 'send');
  await a11y(page, 'send');
  await send(page, 'hello inspector');
  await page.waitForSelector(streamEvent('stream-events', 'status', 'TASK_STATE_COMPLETED'), { timeout: WAIT });
  const log = await page.textContent('#stream-events');
  check(log.includes('thinking about hello inspector'), 'the progress event is in the stream');
  check(log.includes('echo: hello inspector'), 'the answer is in the stream');
  check(await page.isVisible(streamEvent('stream-events', 'task')), 'the stream starts with the task');
  check(await page.isVisible(streamEvent('stream-events', 'status', 'TASK_STATE_WORKING')), 'a working status event');
  check(await page.isVisible(streamEvent('stream-events', 'artifact')), 'an artifact event');
  check(await page.getAttribute('#stream-state', 'data-state') === 'TASK_STATE_COMPLETED', 'state shows completed');
  check(await page.isDisabled('#stream-cancel'), 'cancel is disabled once the task completed');
  check((await page.getAttribute('#stream-events', 'aria-live')) === 'polite', 'the stream view is a live region');
  await shot(page, '02-send-stream');

  step('cancel: a slow task');
  await send(page, 'slow analysis of everything');
  await page.waitForSelector(streamEvent('stream-events', 'status', 'TASK_STATE_WORKING'), { timeout: WAIT });
  await page.waitForSelector('#stream-cancel:not([disabled])', { timeout: WAIT });
  await page.click('#stream-cancel');
  await page.waitForSelector(streamEvent('stream-events', 'status', 'TASK_STATE_CANCELED'), { timeout: WAIT });
  await page.waitForSelector('#stream-state[data-state="TASK_STATE_CANCELED"]', { timeout: WAIT });
  await page.waitForSelector('#send-button:not([disabled])', { timeout: WAIT });
  await shot(page, '03-cancel');

  step('input required: answer the question on the send page');
  await send(page, 'book a table for two');
  await page.waitForSelector(streamEvent('stream-events', 'status', 'TASK_STATE_INPUT_REQUIRED'), { timeout: WAIT });
  await page.waitForSelector('#answer-form:not([hidden])', { timeout: WAIT });
  check((await page.textContent('#answer-question')).includes('Which day?'), 'the question is shown');
  check(await page.evaluate(() => document.activeElement && document.activeElement.id) === 'answer-text', 'focus moves to the answer');
  await page.fill('#answer-text', 'Friday');
  await page.click('#answer-form button[type="submit"]');
  await page.waitForSelector(streamEvent('stream-events', 'status', 'TASK_STATE_COMPLETED'), { timeout: WAIT });
  check((await page.textContent('#stream-events')).includes('booked for Friday'), 'the continuation completed with the answer');
  await shot(page, '04-input-required');

  step('task page: history and artifacts (text, file, image, data, link)');
  await send(page, 'report on the week');
  await page.waitForSelector(streamEvent('stream-events', 'status', 'TASK_STATE_COMPLETED'), { timeout: WAIT });
  await Promise.all([page.waitForURL(/\/inspector\/tasks\/[^/]+$/), page.click('#stream-task a')]);
  await page.waitForSelector('#artifacts');
  const body = await page.textContent('#task-body');
  check(body.includes('report on the week') && body.includes('report ready'), 'history shows both messages');
  check(body.includes('Everything is fine.') && body.includes('Nothing to fix.'), 'the chunked text artifact is whole');
  check(body.includes('"score": 0.93'), 'the data part is rendered as JSON');
  check(body.includes('hello from a file part'), 'a small text file is shown as text');
  check(await page.isVisible('a[href^="https://example.com/reports/"]'), 'the URL part is a link');
  check(await page.isVisible('a[download="notes.txt"]'), 'the file part has a download link');
  await page.waitForFunction(() => { const i = document.querySelector('img.preview'); return i && i.complete && i.naturalWidth === 48; }, null, { timeout: WAIT });
  check(await page.isHidden('#cancel-task'), 'no cancel button on a completed task');
  await a11y(page, 'task');
  await shot(page, '05-task-detail');

  step('task page: answer an input-required task there; the page follows it live');
  await page.goto(insp + 'send');
  await send(page, 'book a room');
  await page.waitForSelector(streamEvent('stream-events', 'status', 'TASK_STATE_INPUT_REQUIRED'), { timeout: WAIT });
  await Promise.all([page.waitForURL(/\/inspector\/tasks\/[^/]+$/), page.click('#stream-task a')]);
  await page.waitForSelector('#task-body[data-state="TASK_STATE_INPUT_REQUIRED"]');
  await page.waitForSelector('#feed-status[data-state="live"]', { timeout: WAIT });
  check(await page.isVisible('#reply-form'), 'the reply form is offered');
  check(await page.isVisible('#cancel-task'), 'the task can be cancelled');
  await page.fill('#reply-text', 'Monday');
  await page.click('#reply-form button[type="submit"]');
  await page.waitForSelector(streamEvent('reply-events', 'status', 'TASK_STATE_COMPLETED'), { timeout: WAIT });
  await page.waitForSelector('#task-body[data-state="TASK_STATE_COMPLETED"]', { timeout: WAIT });
  // The answer is the task's answer artifact (not repeated in history).
  check((await page.textContent('#task-body')).includes('booked for Monday'), 'the task page follows live: the answer is shown');
  check((await page.textContent('#history')).includes('Monday'), 'the history follows live: the reply is in it');
  check(await page.isHidden('#reply-form') && await page.isHidden('#cancel-task'), 'the actions follow the state');
  await shot(page, '06-task-reply');

  step('tasks: a task created by another client appears live');
  await page.goto(insp + 'tasks');
  await page.waitForSelector('#feed-status[data-state="live"]', { timeout: WAIT });
  await a11y(page, 'tasks');
  await page.evaluate(() => { window.__noReload = true; });
  const before = await page.locator('#task-rows tr[data-task-id]').count();
  check(before >= 5, `the list shows the tasks sent so far (${before})`);
  say('need: other-client-task');
  const answer = (await lines.next()).value || '';
  const otherId = answer.replace(/^task /, '').trim();
  check(otherId && otherId !== 'none', `the Go test created a task (${answer})`);
  const row = `#task-rows tr[data-task-id="${otherId}"]`;
  await page.waitForSelector(row, { timeout: WAIT });
  check(await page.evaluate(() => window.__noReload === true), 'the page was not reloaded');
  check((await page.textContent(row)).includes('peer:carol'), 'the row names the other client');
  await page.waitForSelector(`${row}[data-state="TASK_STATE_COMPLETED"]`, { timeout: WAIT });
  check(((await page.textContent('#list-announce')) || '').includes('peer:carol'), 'the change is announced to screen readers');
  await shot(page, '07-tasks-live');

  step('tasks: filter by state and by peer');
  await page.selectOption('#f-state', 'TASK_STATE_CANCELED');
  await Promise.all([page.waitForURL(/state=TASK_STATE_CANCELED/), page.click('#filters button[type="submit"]')]);
  const states = await page.$$eval('#task-rows tr[data-task-id]', (rs) => rs.map((r) => r.dataset.state));
  check(states.length === 1 && states[0] === 'TASK_STATE_CANCELED', `state filter: ${states}`);
  await page.goto(insp + 'tasks?peer=' + encodeURIComponent('peer:carol'));
  const ids = await page.$$eval('#task-rows tr[data-task-id]', (rs) => rs.map((r) => r.dataset.taskId));
  check(ids.length === 1 && ids[0] === otherId, `peer filter: ${ids}`);

  step('send: a message to the configured peer through a2a_call');
  await page.goto(insp + 'send?to=bob');
  check(await page.inputValue('#send-to') === 'bob', 'the peer is preselected');
  await send(page, 'hi bob', 'Peer: bob');
  await page.waitForSelector(streamEvent('stream-events', 'result'), { timeout: WAIT });
  const peerLog = await page.textContent('#stream-events');
  check(peerLog.includes('bob heard: hi bob'), "the peer's answer is in the stream");
  check(await page.isVisible(streamEvent('stream-events', 'progress')), 'progress events of the call are streamed');
  check(await page.getAttribute('#stream-state', 'data-state') === 'TASK_STATE_COMPLETED', 'the call completed');
  await shot(page, '08-send-peer');

  step('peers: the peer, its card and reachability, calls and conversations');
  await page.goto(insp + 'peers');
  await a11y(page, 'peers');
  check(await page.isVisible('article[data-peer="bob"][data-reachable="true"]'), 'bob is reachable');
  check((await page.textContent('article[data-peer="bob"]')).includes('Bob'), "bob's card is shown");
  check((await page.textContent('#recent-calls')).includes('hi bob'), 'the call is listed');
  check((await page.textContent('#recent-calls')).includes('bob heard: hi bob'), 'the answer is listed');
  check(await page.locator('#conversations tbody tr').count() === 1, 'one conversation');
  await Promise.all([page.waitForURL(/\/inspector\/conversations\//), page.click('#conversations tbody a')]);
  check((await page.textContent('main')).includes('bob heard: hi bob'), 'the conversation page shows the exchange');
  await page.goBack();
  await shot(page, '09-peers');

  step('send: "Peer: self" calls the peer named self through a2a_call, not this agent');
  // make run configures a peer named "self"; the option for this agent and
  // the option for that peer must not be one value.
  await page.goto(insp + 'send');
  await send(page, 'hi self', 'Peer: self');
  await page.waitForSelector(streamEvent('stream-events', 'result'), { timeout: WAIT });
  const selfLog = await page.textContent('#stream-events');
  check(selfLog.includes('Sent to peer self (a2a_call)'), 'the message went through a2a_call');
  check(selfLog.includes('bob heard: hi self'), 'the answer is the peer\'s (self is Bob here), not this agent\'s');
  check(!selfLog.includes('SendStreamingMessage'), 'nothing was sent to this agent directly');

  step('overview: charts after the activity');
  await overview.waitForFunction(() => Number(document.querySelector('#totals').textContent.match(/Inbound requests(\d+)/)?.[1] || 0) >= 6, null, { timeout: WAIT });
  await overview.waitForTimeout(2100);
  check((await overview.textContent('#peer-figures')).includes('bob'), 'the outbound calls to bob are counted');
  await shot(overview, '01-overview');

  check(problems.length === 0, 'the pages reported problems:\n' + problems.join('\n'));
  say('done');
} catch (e) {
  console.error(e && e.stack ? e.stack : String(e));
  if (problems.length) console.error('page problems:\n' + problems.join('\n'));
  try {
    for (const p of context.pages()) await p.screenshot({ path: join(outDir, `failure-${context.pages().indexOf(p)}.png`), fullPage: true });
  } catch { /* best effort */ }
  exitCode = 1;
} finally {
  await context.close().catch(() => {});
  rmSync(profile, { recursive: true, force: true });
}
process.exit(exitCode);
