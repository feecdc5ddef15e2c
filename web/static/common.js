// Shared by the chat, memory and ops pages: the API token, JSON requests, SSE over fetch,
// safe Markdown, small DOM helpers. No build step, nothing loaded from elsewhere.
'use strict';

const Engram = (() => {
  const TOKEN_KEY = 'engram.token';

  function token() { return localStorage.getItem(TOKEN_KEY) || ''; }
  function setToken(value) {
    if (value) localStorage.setItem(TOKEN_KEY, value); else localStorage.removeItem(TOKEN_KEY);
  }
  function authHeaders(extra) {
    const headers = Object.assign({}, extra || {});
    if (token()) headers['Authorization'] = 'Bearer ' + token();
    return headers;
  }

  class ApiError extends Error {
    constructor(status, code, message) { super(message); this.status = status; this.code = code; }
  }

  // Every page registers what to do when the server asks for a token (401).
  let onUnauthorized = () => {};
  function whenUnauthorized(handler) { onUnauthorized = handler; }

  async function errorOf(response) {
    let code = 'http_' + response.status, message = response.statusText || 'request failed';
    try {
      const body = await response.json();
      if (body && body.error) { code = body.error.code || code; message = body.error.message || message; }
    } catch (_) { /* not JSON: keep the status text */ }
    if (response.status === 401) onUnauthorized(message);
    return new ApiError(response.status, code, message);
  }

  async function api(method, path, body) {
    const init = { method, headers: authHeaders() };
    if (body !== undefined) { init.headers['Content-Type'] = 'application/json'; init.body = JSON.stringify(body); }
    const response = await fetch(path, init);
    if (!response.ok) throw await errorOf(response);
    return response.json();
  }

  // Read a text/event-stream response; calls onEvent({id, event, data}) per frame.
  // Resolves when the body ends (cleanly or not); rejects on a network error.
  async function readEvents(response, onEvent, signal) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    const abort = () => reader.cancel().catch(() => {});
    if (signal) signal.addEventListener('abort', abort, { once: true });
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
        let cut;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const frame = parseFrame(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
          if (frame) onEvent(frame);
        }
      }
    } finally {
      if (signal) signal.removeEventListener('abort', abort);
    }
  }

  function parseFrame(block) {
    let id = null, event = 'message';
    const data = [];
    for (const line of block.split('\n')) {
      if (!line || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'id') id = value;
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (!data.length) return null;
    try { return { id, event, data: JSON.parse(data.join('\n')) }; } catch (_) { return null; }
  }

  // --- safe Markdown ---------------------------------------------------------------------------
  // Everything is escaped first; formatting is then applied to the escaped text, so no tag or
  // attribute from a reply can reach the page. Links keep only http(s), mailto and site paths.
  function escapeHtml(text) {
    return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;').replace(/'/g, '&#39;');
  }

  function inline(escaped) {
    const codes = [];
    let out = escaped.replace(/`([^`\n]+)`/g, (_, code) => { codes.push(code); return '\u0000' + (codes.length - 1) + '\u0000'; });
    out = out.replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, (whole, label, url) => {
      const safe = /^(https?:\/\/|mailto:|\/(?![\/\\]))/i.test(url);
      return safe ? '<a href="' + url + '" rel="noopener noreferrer" target="_blank">' + label + '</a>' : whole;
    });
    out = out.replace(/\*\*([^*\n]+)\*\*/g, '<strong>$1</strong>').replace(/__([^_\n]+)__/g, '<strong>$1</strong>');
    out = out.replace(/(^|[^*\w])\*([^*\n]+)\*(?!\*)/g, '$1<em>$2</em>').replace(/(^|\W)_([^_\n]+)_(?!\w)/g, '$1<em>$2</em>');
    return out.replace(/\u0000(\d+)\u0000/g, (_, i) => '<code>' + codes[Number(i)] + '</code>');
  }

  function markdown(source) {
    const lines = escapeHtml(source || '').split('\n');
    const html = [];
    let i = 0;
    const para = [];
    const flush = () => { if (para.length) { html.push('<p>' + para.map(inline).join('<br>') + '</p>'); para.length = 0; } };
    while (i < lines.length) {
      const line = lines[i];
      if (/^```/.test(line)) {
        flush();
        const code = [];
        for (i++; i < lines.length && !/^```/.test(lines[i]); i++) code.push(lines[i]);
        html.push('<pre><code>' + code.join('\n') + '</code></pre>');
        i++;
        continue;
      }
      const heading = line.match(/^(#{1,4})\s+(.*)$/);
      if (heading) { flush(); const n = heading[1].length + 2; html.push('<h' + n + '>' + inline(heading[2]) + '</h' + n + '>'); i++; continue; }
      if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
        flush();
        const ordered = /^\s*\d/.test(line);
        const items = [];
        while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
          items.push('<li>' + inline(lines[i].replace(/^\s*([-*+]|\d+[.)])\s+/, '')) + '</li>');
          i++;
        }
        html.push((ordered ? '<ol>' : '<ul>') + items.join('') + (ordered ? '</ol>' : '</ul>'));
        continue;
      }
      if (/^&gt;\s?/.test(line)) {
        flush();
        const quoted = [];
        while (i < lines.length && /^&gt;\s?/.test(lines[i])) { quoted.push(inline(lines[i].replace(/^&gt;\s?/, ''))); i++; }
        html.push('<blockquote>' + quoted.join('<br>') + '</blockquote>');
        continue;
      }
      if (!line.trim()) { flush(); i++; continue; }
      para.push(line);
      i++;
    }
    flush();
    return html.join('');
  }

  // --- DOM helpers -----------------------------------------------------------------------------
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === 'class') node.className = value;
      else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? '' : value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function when(iso) {
    if (!iso) return '';
    const date = new Date(iso);
    if (isNaN(date)) return '';
    const today = new Date();
    const sameDay = date.toDateString() === today.toDateString();
    return sameDay ? date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
      : date.toLocaleDateString([], { month: 'short', day: 'numeric' }) + ' ' +
        date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  }

  // A modal yes/no built on <dialog>; resolves true only for the confirming button.
  function ask(message, { confirmLabel = 'Yes', cancelLabel = 'Cancel', danger = false, typeToConfirm = null } = {}) {
    return new Promise((resolve) => {
      const input = typeToConfirm ? el('input', { type: 'text', 'aria-label': 'Type ' + typeToConfirm + ' to confirm', autocomplete: 'off' }) : null;
      const ok = el('button', { type: 'submit', class: danger ? 'danger' : 'primary', value: 'ok', disabled: !!typeToConfirm }, confirmLabel);
      const cancel = el('button', { type: 'button', value: 'cancel' }, cancelLabel);
      const form = el('form', { method: 'dialog' }, el('p', {}, message),
        typeToConfirm ? el('p', { class: 'hint' }, 'Type “' + typeToConfirm + '” to confirm.') : null, input,
        el('div', { class: 'actions' }, cancel, ok));
      const dialog = el('dialog', { class: 'ask' }, form);
      if (input) input.addEventListener('input', () => { ok.disabled = input.value.trim() !== typeToConfirm; });
      cancel.addEventListener('click', () => dialog.close('cancel'));
      dialog.addEventListener('close', () => { dialog.remove(); resolve(dialog.returnValue === 'ok'); });
      document.body.append(dialog);
      dialog.showModal();
      (input || ok).focus();
    });
  }

  // The token dialog every page shares (header button, or automatically on a 401).
  function tokenDialog(reason) {
    const existing = document.querySelector('dialog.token');
    if (existing) return;
    const input = el('input', { type: 'password', id: 'token-input', autocomplete: 'off', value: token(),
                                'aria-label': 'API token', placeholder: 'API token' });
    const dialog = el('dialog', { class: 'token' }, el('form', { method: 'dialog' },
      el('h2', {}, 'API token'),
      el('p', { class: 'hint' }, reason || 'This server asks for a token. It is kept in this browser only.'),
      input,
      el('div', { class: 'actions' },
        el('button', { type: 'button', onclick: () => { setToken(''); dialog.close('clear'); } }, 'Forget token'),
        el('button', { type: 'submit', class: 'primary', value: 'save' }, 'Save'))));
    dialog.addEventListener('close', () => {
      if (dialog.returnValue === 'save') setToken(input.value.trim());
      dialog.remove();
      if (dialog.returnValue === 'save' || dialog.returnValue === 'clear') window.dispatchEvent(new Event('engram:token'));
    });
    document.body.append(dialog);
    dialog.showModal();
    input.focus();
  }

  function toast(text, kind) {
    let box = document.getElementById('toasts');
    if (!box) { box = el('div', { id: 'toasts', 'aria-live': 'polite' }); document.body.append(box); }
    const item = el('div', { class: 'toast ' + (kind || '') }, text);
    box.append(item);
    setTimeout(() => item.remove(), 6000);
  }

  return { token, setToken, authHeaders, api, ApiError, errorOf, whenUnauthorized, readEvents, parseFrame,
           escapeHtml, markdown, el, when, ask, tokenDialog, toast };
})();
