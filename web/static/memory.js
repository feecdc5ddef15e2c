// The memory page: what Engram remembers, searched, corrected and deleted by the person.
'use strict';
(() => {
  const { api, el, when, ask, toast, authHeaders, errorOf } = Engram;
  const $ = (id) => document.getElementById(id);
  const PAGE = 50;
  const state = { kind: 'facts', query: '', offset: 0 };

  // Search answers with recall hits; lists answer with stored rows. One shape for the cards.
  function normalize(item) {
    if (item.kind === 'fact' || item.kind === 'episode') {
      const meta = item.meta || {};
      return Object.assign({ id: item.id, text: item.text, title: item.text, confidence: meta.confidence,
                             created_at: meta.created_at, updated_at: item.at, score: item.score }, meta);
    }
    return item;
  }

  function scores(item) {
    const parts = [];
    if (item.confidence !== undefined && item.confidence !== null) parts.push('confidence ' + Number(item.confidence).toFixed(2));
    if (item.salience !== undefined && item.salience !== null) parts.push('salience ' + Number(item.salience).toFixed(2));
    if (item.mentions > 1) parts.push('mentioned ' + item.mentions + '×');
    if (item.score !== undefined) parts.push('match ' + Number(item.score).toFixed(2));
    const stamp = item.updated_at || item.ended_at || item.created_at;
    if (stamp) parts.push(when(stamp));
    return parts.join(' · ');
  }

  function factCard(fact) {
    const card = el('li', { class: 'card', id: 'fact-' + fact.id, 'data-id': fact.id });
    const text = el('div', { class: 'text' }, el('div', { class: 'fact-text' }, fact.text),
      el('div', { class: 'muted' }, scores(fact)),
      fact.superseded_at ? el('div', { class: 'warn' }, 'Superseded ' + when(fact.superseded_at) +
        (fact.superseded_by ? ' by #' + fact.superseded_by : '')) : null);
    const actions = el('div', { class: 'actions' },
      fact.superseded_at ? null : el('button', { type: 'button', class: 'edit', onclick: () => editFact(card, fact) }, 'Edit'),
      el('button', { type: 'button', class: 'show-history', onclick: () => showHistory(card, fact) }, 'History'),
      el('button', { type: 'button', class: 'delete', onclick: () => removeItem(card, 'facts', fact.id, fact.text) }, 'Delete'));
    card.append(el('div', { class: 'row' }, text, actions));
    return card;
  }

  function episodeCard(episode) {
    const card = el('li', { class: 'card', id: 'episode-' + episode.id, 'data-id': episode.id });
    const body = el('div', { class: 'text' }, el('strong', { class: 'episode-title' }, episode.title || 'Episode'),
      episode.gist ? el('div', {}, episode.gist) : null,
      episode.summary && episode.summary !== episode.gist ? el('div', { class: 'muted' }, episode.summary) : null,
      episode.outcome ? el('div', {}, 'Outcome: ' + episode.outcome) : null,
      (episode.open_loops || []).length ? el('div', {}, 'Still open: ', episode.open_loops.map((loop) => el('span', { class: 'pill' }, loop))) : null,
      el('div', { class: 'muted' }, scores(episode)));
    const actions = el('div', { class: 'actions' },
      el('button', { type: 'button', class: 'edit', onclick: () => editEpisode(card, episode) }, 'Edit'),
      el('button', { type: 'button', class: 'delete', onclick: () => removeItem(card, 'episodes', episode.id, episode.title) }, 'Delete'));
    card.append(el('div', { class: 'row' }, body, actions));
    return card;
  }

  function editor(card, fields, onSave) {
    const form = el('form', { class: 'editor' });
    const inputs = fields.map((field) => {
      const input = el('textarea', { rows: field.rows || 2, 'aria-label': field.label }, field.value || '');
      form.append(el('label', { class: 'muted' }, field.label), input);
      return input;
    });
    const cancel = el('button', { type: 'button' }, 'Cancel');
    form.append(el('div', { class: 'actions spaced' }, cancel, el('button', { type: 'submit', class: 'primary' }, 'Save')));
    const row = card.querySelector('.row');
    row.hidden = true;
    card.append(form);
    inputs[0].focus();
    const close = () => { form.remove(); row.hidden = false; };
    cancel.addEventListener('click', close);
    form.addEventListener('keydown', (event) => { if (event.key === 'Escape') close(); });
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      try { await onSave(inputs.map((input) => input.value)); } catch (error) { toast(error.message, 'error'); }
    });
  }

  function editFact(card, fact) {
    editor(card, [{ label: 'Fact', value: fact.text }], async ([text]) => {
      if (!text.trim()) throw new Error('A fact cannot be empty.');
      const updated = await api('PATCH', '/memory/facts/' + fact.id, { text });
      const replacement = factCard(updated);
      card.replaceWith(replacement);
      toast(updated.id !== fact.id ? 'Corrected. The old version is kept in its history.' : 'Saved.');
      replacement.querySelector('.edit')?.focus();
    });
  }

  function editEpisode(card, episode) {
    editor(card, [{ label: 'Title', value: episode.title, rows: 1 }, { label: 'Summary', value: episode.summary || episode.gist, rows: 3 }],
      async ([title, summary]) => {
        const updated = await api('PATCH', '/memory/episodes/' + episode.id, { title, summary });
        card.replaceWith(episodeCard(updated));
        toast('Saved.');
      });
  }

  async function showHistory(card, fact) {
    const open = card.querySelector('.history');
    if (open) { open.remove(); return; }
    const body = await api('GET', '/memory/facts/' + fact.id + '/history');
    const box = el('div', { class: 'history' }, el('div', { class: 'muted' }, 'Versions, oldest first:'),
      el('ol', {}, body.versions.map((version) => el('li', { class: version.superseded_at ? 'old' : '' },
        version.text, ' ', el('span', { class: 'muted' }, '(' + when(version.created_at) + ')')))));
    card.append(box);
  }

  async function removeItem(card, kind, id, text) {
    const noun = kind === 'facts' ? 'fact' : 'episode';
    const ok = await ask('Delete this ' + noun + '? “' + String(text || '').slice(0, 140) + '”. Engram will no longer remember it.',
      { confirmLabel: 'Delete', danger: true });
    if (!ok) return;
    try {
      await api('DELETE', '/memory/' + kind + '/' + id);
      card.remove();
      toast('Deleted.');
    } catch (error) { toast(error.message, 'error'); }
  }

  async function load(more) {
    state.offset = more ? state.offset : 0;
    const params = new URLSearchParams({ limit: PAGE, offset: state.offset });
    if (state.query) params.set('q', state.query);
    if (state.kind === 'facts' && $('show-history').checked) params.set('include_superseded', '1');
    let body;
    try { body = await api('GET', '/memory/' + state.kind + '?' + params); } catch (error) {
      $('summary').textContent = error.status === 401 ? 'This server needs a token.' : error.message;
      return;
    }
    const items = (body[state.kind] || []).map(normalize);
    const list = $('items');
    if (!more) list.replaceChildren();
    items.forEach((item) => list.append(state.kind === 'facts' ? factCard(item) : episodeCard(item)));
    state.offset += items.length;
    $('more').hidden = !!state.query || items.length < PAGE;
    const shown = list.children.length;
    $('summary').textContent = shown ? (state.query ? shown + ' matching ' : shown + ' ') +
      (state.kind === 'facts' ? (shown === 1 ? 'fact' : 'facts') : (shown === 1 ? 'episode' : 'episodes'))
      : (state.query ? 'Nothing matches “' + state.query + '”.' : 'Nothing remembered here yet.');
  }

  // A link from a chat receipt (#fact-12): show that item, highlighted, even if it is not on the first page.
  async function focusHash() {
    const match = location.hash.match(/^#(fact|episode)-(\d+)$/);
    if (!match) return;
    const kind = match[1] + 's';
    if (state.kind !== kind) selectTab(kind, false);
    await load();
    let card = document.getElementById(match[1] + '-' + match[2]);
    if (!card) {
      try {
        const item = await api('GET', '/memory/' + kind + '/' + match[2]);
        card = kind === 'facts' ? factCard(item) : episodeCard(item);
        $('items').prepend(card);
      } catch (error) { toast(error.status === 404 ? 'That memory no longer exists.' : error.message, 'error'); return; }
    }
    card.classList.add('highlight');
    card.scrollIntoView({ block: 'center' });
  }

  function selectTab(kind, reload = true) {
    state.kind = kind;
    document.querySelectorAll('[role=tab]').forEach((tab) => tab.setAttribute('aria-selected', String(tab.dataset.kind === kind)));
    $('show-history').parentElement.hidden = kind !== 'facts';
    if (reload) load();
  }

  async function exportAll() {
    const response = await fetch('/memory/export', { headers: authHeaders() });
    if (!response.ok) { toast((await errorOf(response)).message, 'error'); return; }
    const blob = await response.blob();
    const link = el('a', { href: URL.createObjectURL(blob), download: 'engram-memory.json' });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  }

  async function forgetAll() {
    const ok = await ask('Forget everything Engram remembers about you: every conversation, fact, episode, list and ' +
      'reminder. This cannot be undone; export first if you may want it back.',
      { confirmLabel: 'Forget everything', danger: true, typeToConfirm: 'forget' });
    if (!ok) return;
    try {
      await api('DELETE', '/memory?confirm=true');
      toast('Everything was forgotten.');
      load();
    } catch (error) { toast(error.message, 'error'); }
  }

  document.querySelectorAll('[role=tab]').forEach((tab) => tab.addEventListener('click', () => selectTab(tab.dataset.kind)));
  document.querySelector('[role=tablist]').addEventListener('keydown', (event) => {
    if (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft') return;
    const next = state.kind === 'facts' ? 'episodes' : 'facts';
    selectTab(next);
    $('tab-' + next).focus();
  });
  $('search-form').addEventListener('submit', (event) => { event.preventDefault(); state.query = $('q').value.trim(); load(); });
  $('show-history').addEventListener('change', () => load());
  $('more').addEventListener('click', () => load(true));
  $('export').addEventListener('click', exportAll);
  $('forget-all').addEventListener('click', forgetAll);
  $('token-button').addEventListener('click', () => Engram.tokenDialog());
  Engram.whenUnauthorized((message) => Engram.tokenDialog('This server needs a token (' + message + ').'));
  window.addEventListener('engram:token', () => load());
  window.addEventListener('hashchange', focusHash);
  if (location.hash) focusHash(); else load();
})();
