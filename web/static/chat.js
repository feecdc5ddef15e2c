// The chat page: conversations, streamed replies that survive a dropped connection, the
// proactive stream, yes/no confirmations and "what I remembered" receipts.
'use strict';
(() => {
  const { api, el, markdown, when, readEvents, authHeaders, errorOf } = Engram;
  const $ = (id) => document.getElementById(id);
  const THREAD_KEY = 'engram.thread';
  const PENDING_KEY = 'engram.pending';
  const PAGE = 30;
  const state = { threadId: null, threadsOffset: 0, busy: false, navigation: 0, creating: null };
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  // --- status line and connection badge --------------------------------------------------------
  function setStatus(text) { $('status').textContent = text || ''; }
  const STAGES = { processing: 'Sent — waiting for a worker…', thinking: 'Thinking', acting: 'Working',
                   still_working: 'Still working on it…', retrying: 'Something failed; trying again…' };
  function describe(data) {
    const parts = [STAGES[data.stage] || data.stage];
    if (data.mode) parts.push('mode ' + data.mode);
    if (data.topic) parts.push('topic ' + data.topic);
    if (data.skill) parts.push('skill ' + data.skill);
    return parts.join(' · ');
  }

  // --- rendering ----------------------------------------------------------------------------------
  function memoryLink(item) {
    if (item.kind === 'exchange') return '/?thread=' + encodeURIComponent(item.thread_id || '') + '#exchange-' + item.id;
    return '/memory#' + item.kind + '-' + item.id;
  }

  function receiptsEl(items) {
    if (!items || !items.length) return null;
    return el('details', { class: 'receipts' },
      el('summary', {}, 'What I remembered (' + items.length + ')'),
      el('ul', {}, items.map((item) => el('li', {},
        el('span', { class: 'kind' }, item.kind), el('a', { href: memoryLink(item) }, item.text)))));
  }

  function metaEl(info) {
    const meta = el('div', { class: 'meta' });
    if (info.mode) meta.append(el('span', { class: 'mode' }, info.mode));
    if (info.topic) meta.append(el('span', {}, info.topic));
    if (info.tools && info.tools.length) meta.append(el('span', {}, 'used ' + info.tools.join(', ')));
    if (info.seconds !== undefined) meta.append(el('span', {}, info.seconds + ' s'));
    if (info.at) meta.append(el('time', { datetime: info.at }, when(info.at)));
    return meta;
  }

  function confirmEl(confirm) {
    const box = el('div', { class: 'confirm', role: 'group', 'aria-label': 'Confirm the action' });
    const answer = (word) => { box.querySelectorAll('button').forEach((b) => { b.disabled = true; }); send(word); };
    box.append(el('span', { class: 'muted' }, confirm.description ? 'Go ahead: ' + confirm.description + '?' : 'Go ahead?'),
      el('button', { type: 'button', class: 'primary', 'data-answer': 'yes', onclick: () => answer('yes') }, 'Yes'),
      el('button', { type: 'button', 'data-answer': 'no', onclick: () => answer('no') }, 'No'));
    return box;
  }

  function clearEmpty() { const empty = document.querySelector('#log .empty'); if (empty) empty.remove(); }
  function dropConfirmations() { document.querySelectorAll('#log .confirm').forEach((node) => node.remove()); }

  function turnEl(userText, id) {
    clearEmpty();
    const turn = el('div', { class: 'turn', id: id ? 'exchange-' + id : null });
    turn.append(el('div', { class: 'bubble you' }, userText));
    return turn;
  }

  function storedTurn(exchange, isLast) {
    const turn = turnEl(exchange.user_text, exchange.id);
    const bubble = el('div', { class: 'bubble engram' });
    bubble.innerHTML = markdown(exchange.reply);
    turn.append(bubble, metaEl({ mode: exchange.mode, topic: exchange.topic, tools: exchange.tools, at: exchange.created_at }));
    const receipts = receiptsEl(exchange.recalled);
    if (receipts) turn.append(receipts);
    if (isLast && exchange.confirm) turn.append(confirmEl(exchange.confirm));
    return turn;
  }

  function scrollDown() { const log = $('log'); log.scrollTop = log.scrollHeight; }

  function emptyState() {
    $('log').replaceChildren(el('div', { class: 'empty' }, el('h2', {}, 'What is on your mind?'),
      el('p', {}, 'Engram remembers what you tell it, can set reminders and keep lists. ' +
        'Everything it remembers is on the Memory page, where you can correct or delete it.')));
  }

  // --- one reply as it streams ------------------------------------------------------------------
  class LiveReply {
    constructor(turn) {
      this.turn = turn;
      this.bubble = el('div', { class: 'bubble engram streaming', 'aria-busy': 'true' });
      this.meta = el('div', { class: 'meta' });
      turn.append(this.bubble, this.meta);
      this.text = '';
      this.lastId = null;
      this.done = false;
      this.requestId = null;
    }

    handle(event) {
      if (event.id) this.lastId = event.id;
      const data = event.data || {};
      if (event.event === 'status') {
        if (data.stage === 'retrying') this.render('');  // the reply starts over
        setStatus(describe(data));
        if (data.mode || data.skill) this.meta.replaceWith(this.meta = metaEl({ mode: data.mode, topic: data.topic, tools: data.skill ? [data.skill] : [] }));
      } else if (event.event === 'delta') {
        this.render(this.text + (data.text || ''));
      } else if (event.event === 'message') {
        this.finish(data);
      } else if (event.event === 'error') {
        this.fail(data.message || 'Something went wrong.');
      } else if (event.event === 'done') {
        this.done = true;
        this.bubble.classList.remove('streaming');
        this.bubble.removeAttribute('aria-busy');
      }
      if (isNearBottom()) scrollDown();
    }

    render(text) {
      this.text = text;
      this.bubble.innerHTML = markdown(text);
    }

    finish(data) {
      this.render(data.text || '');
      if (data.exchange_id) this.turn.id = 'exchange-' + data.exchange_id;
      const tools = Object.keys((data.metrics && data.metrics.tools) || {});
      const seconds = data.metrics ? data.metrics.response_time_s : undefined;
      this.meta.replaceWith(this.meta = metaEl({ mode: data.mode, topic: data.topic, tools, seconds }));
      const receipts = receiptsEl(data.recalled);
      if (receipts) this.turn.append(receipts);
      if (data.confirm) this.turn.append(confirmEl(data.confirm));
      setStatus('');
    }

    fail(message) {
      this.bubble.classList.remove('streaming');
      this.turn.append(el('div', { class: 'meta error', role: 'alert' }, message));
      setStatus('');
    }
  }

  function isNearBottom() { const log = $('log'); return log.scrollHeight - log.scrollTop - log.clientHeight < 160; }

  // --- sending and following a reply ------------------------------------------------------------
  async function send(text) {
    if (state.busy || !text.trim()) return false;
    state.busy = true;
    $('send').disabled = true;
    // A conversation being created gets this message (its answer lands before we go on).
    if (state.creating) await state.creating.catch(() => null);
    dropConfirmations();
    const turn = turnEl(text);
    $('log').append(turn);
    const live = new LiveReply(turn);
    scrollDown();
    setStatus('Sending…');
    try {
      const body = { text };
      if (state.threadId) body.thread_id = state.threadId;
      let response;
      try {
        response = await fetch('/chat', { method: 'POST', headers: authHeaders({ 'Content-Type': 'application/json' }),
                                          body: JSON.stringify(body) });
      } catch (error) {
        live.fail('Could not reach Engram (' + error.message + '). Your message was not sent.');
        return false;
      }
      if (!response.ok) {
        const error = await errorOf(response);
        live.fail(error.message);
        return false;
      }
      live.requestId = response.headers.get('X-Request-ID');
      const threadId = response.headers.get('X-Thread-ID');
      if (threadId && threadId !== state.threadId) rememberThread(threadId);
      savePending({ request_id: live.requestId, thread_id: threadId, text });
      await follow(live, response);
      localStorage.removeItem(PENDING_KEY);
      loadThreads();
      return true;
    } finally {
      state.busy = false;
      $('send').disabled = false;
    }
  }

  // Read the stream; when it drops before `done`, re-attach with Last-Event-ID so the log
  // resumes exactly after the last event shown (no text twice, none lost).
  async function follow(live, response) {
    let failures = 0;
    while (!live.done) {
      try {
        if (!response) {
          const headers = authHeaders(live.lastId ? { 'Last-Event-ID': live.lastId } : {});
          response = await fetch('/chat/' + encodeURIComponent(live.requestId) + '/events', { headers });
          if (!response.ok) {
            const error = await errorOf(response);
            if (response.status < 500) { live.fail(error.message); return; }
            throw error;
          }
        }
        await readEvents(response, (event) => {
          live.handle(event);
          failures = 0;
          savePending(Object.assign(loadPending() || {}, { last_id: live.lastId }));
        });
      } catch (_) { /* the connection dropped: re-attach below */ }
      response = null;
      if (live.done) break;
      failures += 1;
      if (failures > 40) { live.fail('Lost the connection to Engram. Reload the page to see the reply.'); return; }
      setStatus('Connection lost — reconnecting…');
      await sleep(Math.min(4000, 250 * failures));
    }
  }

  function savePending(value) { localStorage.setItem(PENDING_KEY, JSON.stringify(value)); }
  function loadPending() { try { return JSON.parse(localStorage.getItem(PENDING_KEY) || 'null'); } catch (_) { return null; } }

  // A reload while a reply was streaming: show it again from the start of its event log.
  async function resumePending(storedRequestIds) {
    const pending = loadPending();
    if (!pending || !pending.request_id || pending.thread_id !== state.threadId) return;
    if (storedRequestIds.has(pending.request_id)) { localStorage.removeItem(PENDING_KEY); return; }
    state.busy = true;
    try {
      const turn = turnEl(pending.text || '');
      $('log').append(turn);
      const live = new LiveReply(turn);
      live.requestId = pending.request_id;
      await follow(live, null);
      localStorage.removeItem(PENDING_KEY);
    } finally { state.busy = false; }
  }

  // --- conversations ----------------------------------------------------------------------------
  function rememberThread(threadId) {
    state.threadId = threadId;
    if (threadId) localStorage.setItem(THREAD_KEY, threadId); else localStorage.removeItem(THREAD_KEY);
    document.querySelectorAll('#thread-list button').forEach((button) => {
      button.setAttribute('aria-current', String(button.dataset.id === threadId));
    });
  }

  async function loadThreads(more) {
    const offset = more ? state.threadsOffset : 0;
    let page;
    try { page = await api('GET', '/threads?limit=20&offset=' + offset); } catch (_) { return null; }
    const list = $('thread-list');
    if (!more) list.replaceChildren();
    for (const thread of page.threads) {
      // Empty conversations other than the open one are clutter: they are not listed.
      if (!thread.exchanges && thread.id !== state.threadId) continue;
      list.append(el('li', {}, el('button', {
        type: 'button', 'data-id': thread.id, 'aria-current': String(thread.id === state.threadId),
        onclick: () => { openThread(thread.id); $('chat').classList.remove('show-threads'); },
      }, el('span', { class: 'title' }, thread.title), el('span', { class: 'when' }, when(thread.last_active_at) +
        ' · ' + thread.exchanges + (thread.exchanges === 1 ? ' message' : ' messages')))));
    }
    state.threadsOffset = offset + page.threads.length;
    $('more-threads').hidden = state.threadsOffset >= page.total;
    return page;
  }

  async function openThread(threadId, focusExchange) {
    if (state.busy) return;
    const navigation = ++state.navigation;  // a later click wins over this one's slower answer
    let page;
    try { page = await api('GET', '/threads/' + encodeURIComponent(threadId) + '/exchanges?limit=' + PAGE); } catch (error) {
      if (error.status === 404 && navigation === state.navigation) { rememberThread(null); emptyState(); }
      return;
    }
    if (navigation !== state.navigation) return;
    rememberThread(threadId);
    const log = $('log');
    log.replaceChildren();
    if (!page.exchanges.length) emptyState();
    if (page.has_more) log.append(olderButton(page.before));
    page.exchanges.forEach((exchange, i) => log.append(storedTurn(exchange, i === page.exchanges.length - 1)));
    const target = focusExchange && document.getElementById(focusExchange);
    if (target) { target.scrollIntoView({ block: 'center' }); target.querySelector('.bubble.engram').classList.add('highlight'); } else scrollDown();
    resumePending(new Set(page.exchanges.map((exchange) => exchange.request_id)));
  }

  function olderButton(before) {
    const button = el('button', { type: 'button', class: 'link', id: 'load-older' }, 'Load earlier messages');
    button.addEventListener('click', async () => {
      const page = await api('GET', '/threads/' + encodeURIComponent(state.threadId) + '/exchanges?limit=' + PAGE + '&before=' + before);
      const log = $('log');
      const anchor = button.nextSibling;
      const height = log.scrollHeight;
      button.remove();
      if (page.has_more) log.insertBefore(olderButton(page.before), anchor);
      for (const exchange of page.exchanges) log.insertBefore(storedTurn(exchange, false), anchor);
      log.scrollTop += log.scrollHeight - height;
    });
    return button;
  }

  async function newThread() {
    if (state.busy) return;
    const navigation = ++state.navigation;
    state.creating = api('POST', '/threads');
    try {
      const thread = await state.creating;
      if (navigation !== state.navigation) return;
      rememberThread(thread.id);
      emptyState();
      $('chat').classList.remove('show-threads');
      await loadThreads();
      $('message').focus();
    } catch (error) { Engram.toast(error.message, 'error'); } finally { state.creating = null; }
  }

  // --- wiring -----------------------------------------------------------------------------------
  function autosize() { const box = $('message'); box.style.height = 'auto'; box.style.height = Math.min(box.scrollHeight, 192) + 'px'; }

  async function submit() {
    const box = $('message');
    const text = box.value;
    if (!text.trim() || state.busy) return;
    box.value = '';
    autosize();
    const sent = await send(text);
    if (!sent && !box.value) { box.value = text; autosize(); }
  }

  function wire() {
    $('send-form').addEventListener('submit', (event) => { event.preventDefault(); submit(); });
    $('message').addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) { event.preventDefault(); submit(); }
    });
    $('message').addEventListener('input', autosize);
    $('new-thread').addEventListener('click', newThread);
    $('more-threads').addEventListener('click', () => loadThreads(true));
    $('token-button').addEventListener('click', () => Engram.tokenDialog());
    $('threads-toggle').addEventListener('click', () => {
      const open = $('chat').classList.toggle('show-threads');
      $('threads-toggle').setAttribute('aria-expanded', String(open));
    });
    document.addEventListener('keydown', (event) => {
      if (event.altKey && (event.key === 'n' || event.key === 'N')) { event.preventDefault(); newThread(); }
      if (event.key === 'Escape') $('chat').classList.remove('show-threads');
      const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName);
      if (event.key === '/' && !typing) { event.preventDefault(); $('message').focus(); }
    });
    Engram.whenUnauthorized((message) => Engram.tokenDialog('This server needs a token (' + message + ').'));
    window.addEventListener('engram:token', start);
  }

  // Reminders, thoughts and goal progress go into the open conversation as cards (updates.js).
  function connectUpdates() {
    EngramUpdates.connect({ onCard: (card) => { clearEmpty(); $('log').append(card); scrollDown(); } });
  }

  async function start() {
    const params = new URLSearchParams(location.search);
    const navigation = state.navigation;
    const page = await loadThreads();
    if (navigation !== state.navigation) { connectUpdates(); return; }  // the person already chose a conversation
    const wanted = params.get('thread') || localStorage.getItem(THREAD_KEY) ||
      (page && (page.threads.find((thread) => thread.current) || {}).id);
    if (wanted) await openThread(wanted, location.hash.slice(1)); else emptyState();
    connectUpdates();
    $('message').focus();
  }

  wire();
  start();
})();
