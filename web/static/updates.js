// The proactive stream (GET /events): reminders, thoughts and goal progress as they arrive.
// Each event is shown once, by id; after a drop the stream resumes with Last-Event-ID.
'use strict';
const EngramUpdates = (() => {
  const { el, markdown, when, readEvents, authHeaders, errorOf } = Engram;
  const $ = (id) => document.getElementById(id);
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  // The first connection replays the stored log: events logged before it (their id is the Redis
  // time in ms; the response's Date header is the server's) are history and only listed. Later
  // ones, and everything replayed after a reconnect, are new and also go into the conversation.
  const state = { seen: new Set(), lastId: null, abort: null, historyBefore: null, onCard: () => {} };

  function setConn(live, text) {
    const badge = $('conn');
    badge.className = live ? 'live' : 'down';
    badge.textContent = text || (live ? 'live' : 'offline');
  }

  const EVENT_LABELS = { reminder: 'Reminder', thought: 'A thought', goal: 'Goal' };

  function describeEvent(event) {
    const data = event.data || {};
    if (event.event === 'reminder') {
      const label = data.kind === 'scheduled_prompt' ? 'Scheduled' : 'Reminder';
      return { label, text: data.reply || data.text || '', detail: data.due_at ? 'due ' + when(data.due_at) : '' };
    }
    if (event.event === 'thought') return { label: 'A thought', text: data.text || '', detail: data.topic || '' };
    if (event.event === 'goal') {
      return { label: 'Goal' + (data.title ? ': ' + data.title : ''), text: data.text || '', detail: data.status || '' };
    }
    return { label: event.event, text: data.text || '', detail: '' };
  }

  function onProactive(event) {
    if (!EVENT_LABELS[event.event]) return;
    if (event.id) {
      if (state.seen.has(event.id)) return;
      state.seen.add(event.id);
      state.lastId = event.id;
    }
    const shown = describeEvent(event);
    $('no-updates')?.remove();
    $('updates').prepend(el('li', { class: 'update ' + event.event }, el('strong', {}, shown.label), ' ', shown.text,
      shown.detail ? el('div', { class: 'muted' }, shown.detail) : null));
    const loggedAt = event.id ? Number(event.id.split('-')[0]) : Date.now();
    if (!(loggedAt < state.historyBefore)) {
      const card = el('div', { class: 'event-card ' + event.event, role: 'status' },
        el('div', { class: 'label' }, shown.label + (shown.detail ? ' · ' + shown.detail : '')));
      const body = el('div', { class: 'text' });
      body.innerHTML = markdown(shown.text);
      card.append(body);
      state.onCard(card);
    }
  }

  async function connect(options) {
    if (options && options.onCard) state.onCard = options.onCard;
    if (state.abort) state.abort.abort();
    const controller = new AbortController();
    state.abort = controller;
    let failures = 0;
    while (!controller.signal.aborted) {
      try {
        const headers = authHeaders(state.lastId ? { 'Last-Event-ID': state.lastId } : {});
        const response = await fetch('/events', { headers, signal: controller.signal });
        if (response.status === 401) { await errorOf(response); setConn(false, 'needs token'); return; }
        if (!response.ok) throw new Error('HTTP ' + response.status);
        setConn(true);
        failures = 0;
        if (state.historyBefore === null) state.historyBefore = state.lastId ? 0 : Date.parse(response.headers.get('Date')) || 0;
        await readEvents(response, onProactive, controller.signal);
      } catch (_) { /* dropped: reconnect below with Last-Event-ID, so nothing is missed */ }
      if (controller.signal.aborted) return;
      setConn(false, 'reconnecting');
      failures += 1;
      await sleep(Math.min(10000, 400 * failures));
    }
  }

  return { connect };
})();
