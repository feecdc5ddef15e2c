// The ops page: health, RQ queues and workers, metrics turned into tables, routing decisions and
// the periodic services. Works from /healthz, /metrics and the /ops JSON alone (no Grafana).
'use strict';
(() => {
  const { api, el, when, toast } = Engram;
  const $ = (id) => document.getElementById(id);
  const REFRESH_MS = 5000;

  // --- Prometheus text → {name: [{labels, value}]} ---------------------------------------------
  function parseMetrics(text) {
    const out = {};
    for (const line of text.split('\n')) {
      if (!line || line.startsWith('#')) continue;
      const match = line.match(/^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/);
      if (!match) continue;
      const labels = {};
      for (const pair of (match[2] || '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]] = pair[2];
      (out[match[1]] = out[match[1]] || []).push({ labels, value: parseFloat(match[3]) });
    }
    return out;
  }

  const sum = (samples) => (samples || []).reduce((total, s) => total + s.value, 0);
  const fmt = (n) => (Number.isInteger(n) ? String(n) : n.toFixed(2));

  function seconds(value) {
    if (value === null || value === undefined || isNaN(value)) return '–';
    if (value === Infinity) return '> 60 s';
    if (value < 1) return (value * 1000).toFixed(value < 0.01 ? 2 : 1) + ' ms';
    return value.toFixed(2) + ' s';
  }

  // Like PromQL's histogram_quantile: linear interpolation inside the bucket that holds the rank.
  function quantile(buckets, q) {
    const sorted = buckets.slice().sort((a, b) => a.le - b.le);
    const total = sorted.length ? sorted[sorted.length - 1].count : 0;
    if (!total) return null;
    const rank = q * total;
    let lowerBound = 0, lowerCount = 0;
    for (const bucket of sorted) {
      if (bucket.count >= rank) {
        if (bucket.le === Infinity) return lowerBound ? Infinity : null;
        const inBucket = bucket.count - lowerCount;
        return lowerBound + (bucket.le - lowerBound) * (inBucket ? (rank - lowerCount) / inBucket : 0);
      }
      lowerBound = bucket.le;
      lowerCount = bucket.count;
    }
    return null;
  }

  function histograms(metrics, name) {
    const series = {};
    for (const sample of metrics[name + '_bucket'] || []) {
      const { le, ...rest } = sample.labels;
      const key = Object.entries(rest).map(([k, v]) => k + '=' + v).join(', ');
      (series[key] = series[key] || []).push({ le: le === '+Inf' ? Infinity : parseFloat(le), count: sample.value });
    }
    return series;
  }

  function table(headers, rows, numeric) {
    if (!rows.length) return el('p', { class: 'muted' }, 'Nothing yet.');
    return el('table', {}, el('thead', {}, el('tr', {}, headers.map((h, i) => el('th', { class: numeric && numeric[i] ? 'num' : null }, h)))),
      el('tbody', {}, rows.map((row) => el('tr', {}, row.map((cell, i) => el('td', { class: numeric && numeric[i] ? 'num' : null }, cell))))));
  }

  function stat(label, value, cls) {
    return el('div', { class: 'stat' }, el('div', { class: 'big ' + (cls || '') }, value), el('div', { class: 'muted' }, label));
  }

  // --- panels ---------------------------------------------------------------------------------
  async function health() {
    let body;
    try { body = await (await fetch('/healthz')).json(); } catch (_) { $('health').replaceChildren(el('p', { class: 'bad' }, 'No answer from /healthz.')); return; }
    $('health-status').replaceChildren(el('span', { class: body.status === 'ok' ? 'ok' : 'bad' }, body.status));
    $('health').replaceChildren(table(['check', '', 'detail'], Object.entries(body.checks).map(([name, check]) =>
      [name, el('span', { class: check.ok ? 'ok' : 'bad' }, check.ok ? 'ok' : 'down'), String(check.detail)])));
  }

  function fromMetrics(m) {
    const turns = sum(m.engram_mode_total);
    const activity = el('div', { class: 'stats' }, stat('turns', fmt(turns)), stat('open streams', fmt(sum(m.engram_sse_open_streams))),
      stat('chat requests', fmt(sum(m.engram_chat_requests_total))));
    $('activity').replaceChildren(activity, table(['request outcome', 'count'],
      (m.engram_chat_requests_total || []).map((s) => [s.labels.outcome || '', fmt(s.value)]), [false, true]));
    $('modes').replaceChildren(table(['mode', 'turns', 'share'], (m.engram_mode_total || []).sort((a, b) => b.value - a.value)
      .map((s) => [s.labels.mode, fmt(s.value), turns ? Math.round(100 * s.value / turns) + ' %' : '–']), [false, true, true]));
    latency(m);
    $('tokens').replaceChildren(tokens(m));
    $('failures').replaceChildren(table(['what', 'count'], [
      ['memory enrichment failures', fmt(sum(m.engram_memory_enrichment_failures_total))],
      ['fallback replies (LLM down)', fmt(sum(m.engram_llm_fallbacks_total))],
      ...(m.engram_job_failures_total || []).map((s) => ['jobs failed for good' + (s.labels.queue ? ' · ' + s.labels.queue : ''), fmt(s.value)]),
    ], [false, true]));
    $('memory').replaceChildren(table(['store', 'rows'], (m.engram_memory_items || []).map((s) => [s.labels.kind, fmt(s.value)]), [false, true]));
  }

  const LATENCIES = [
    ['engram_routing_seconds', 'routing'], ['engram_classification_seconds', 'classification'],
    ['engram_llm_first_token_seconds', 'first token'], ['engram_reply_seconds', 'reply'], ['engram_llm_seconds', 'LLM call'],
  ];

  function latency(m) {
    const rows = [];
    for (const [name, label] of LATENCIES) {
      for (const [key, buckets] of Object.entries(histograms(m, name))) {
        const count = Math.max(...buckets.map((b) => b.count));
        rows.push([label + (key ? ' · ' + key.replace('role=', '') : ''), String(count),
          seconds(quantile(buckets, 0.5)), seconds(quantile(buckets, 0.95)), seconds(quantile(buckets, 0.99))]);
      }
    }
    $('latency').replaceChildren(table(['stage', 'count', 'p50', 'p95', 'p99'], rows, [false, true, true, true, true]));
  }

  function tokens(m) {
    const byRole = {};
    for (const s of m.engram_tokens_total || []) {
      const row = byRole[s.labels.role] = byRole[s.labels.role] || {};
      row[s.labels.kind] = (row[s.labels.kind] || 0) + s.value;
    }
    return table(['role', 'prompt', 'completion'], Object.entries(byRole).map(([role, kinds]) =>
      [role, fmt(kinds.prompt || 0), fmt(kinds.completion || 0)]), [false, true, true]);
  }

  async function metrics() {
    const response = await fetch('/metrics');
    fromMetrics(parseMetrics(await response.text()));
  }

  function needsToken(target, error) {
    target.replaceChildren(el('p', { class: error.status === 401 ? 'warn' : 'bad' },
      error.status === 401 ? 'This needs the API token (Token button above).' : error.message));
  }

  async function queues() {
    let body;
    try { body = await api('GET', '/ops/queues'); } catch (error) {
      ['queues', 'workers', 'failed'].forEach((id) => needsToken($(id), error));
      return;
    }
    const workersOn = {};
    body.workers.forEach((worker) => worker.queues.forEach((q) => { workersOn[q] = (workersOn[q] || 0) + 1; }));
    $('queues').replaceChildren(table(['queue', 'waiting', 'started', 'failed', 'scheduled', 'deferred', 'finished', 'workers'],
      body.queues.map((q) => [q.queue, String(q.queued), String(q.started),
        el('span', { class: q.failed ? 'bad' : '' }, String(q.failed)), String(q.scheduled), String(q.deferred),
        String(q.finished), el('span', { class: workersOn[q.queue] ? '' : 'bad' }, String(workersOn[q.queue] || 0))]),
      [false, true, true, true, true, true, true, true]));
    // Imported exchanges whose meaning vectors the backfill (memory-chunker-queue) has not computed yet.
    $('queues').append(el('p', { class: 'muted' }, 'exchanges waiting for their vector: ' + body.vectors_pending
    + (body.vectors_unembeddable ? ' · the model failed on ' + body.vectors_unembeddable + ' (searchable by words only)' : '')));
    $('workers').replaceChildren(table(['worker', 'state', 'queues', 'current job', 'ok / failed', 'heartbeat'],
      body.workers.map((w) => [w.name, w.state, w.queues.join(', '), w.current_job_id || '–',
        w.successful_jobs + ' / ' + w.failed_jobs, when(w.last_heartbeat)])));
    $('failed').replaceChildren(table(['job', 'queue', 'function', 'error', 'ended', ''],
      body.failed_jobs.map((job) => [job.id, job.queue, job.function, job.error, when(job.ended_at),
        el('button', { type: 'button', class: 'retry', 'data-job': job.id, onclick: (event) => retry(event.target, job.id) }, 'Retry')])));
  }

  async function retry(button, jobId) {
    button.disabled = true;
    try {
      const body = await api('POST', '/ops/jobs/' + encodeURIComponent(jobId) + '/retry');
      toast('Job ' + jobId + ' is back on ' + body.queue + '.');
      refresh();
    } catch (error) { toast(error.message, 'error'); button.disabled = false; }
  }

  function topSignals(signals) {
    return Object.entries(signals || {}).filter(([, value]) => value === true || (typeof value === 'number' && value > 0))
      .slice(0, 8).map(([name, value]) => el('span', { class: 'pill' }, value === true || value === 1 ? name : name + ' ' + fmt(value)));
  }

  async function routing() {
    let body;
    try { body = await api('GET', '/ops/routing?limit=15'); } catch (error) { needsToken($('routing'), error); return; }
    $('routing').replaceChildren(table(['when', 'mode', 'topic', 'confidence', 'margin', 'signals', 'tie-break', 'recalled', 'latency'],
      body.decisions.map((d) => [when(d.created_at), el('strong', {}, d.mode), d.topic || '–', fmt(d.confidence), fmt(d.margin),
        el('div', {}, topSignals(d.signals)), d.tiebreaker_used ? (d.tiebreaker_result || 'asked') : '–', String(d.recalled),
        d.latency_ms.toFixed(1) + ' ms']), [false, false, false, true, true, false, false, true, true]));
  }

  // Hidden on a build without periodic services (404). Outcomes: ran, skipped (with its reason), failed.
  async function services() {
    let response;
    try { response = await fetch('/ops/services', { headers: Engram.authHeaders() }); } catch (_) { return; }
    const panel = $('services-panel');
    if (response.status === 404) { panel.hidden = true; return; }
    panel.hidden = false;
    if (!response.ok) { needsToken($('services'), { status: response.status, message: 'HTTP ' + response.status }); return; }
    const body = await response.json();
    const list = Array.isArray(body) ? body : (body.services || []);
    $('services').replaceChildren(table(['service', 'schedule', 'enabled', 'queue', 'last run', 'outcome', 'took', 'next run'],
      list.map((s) => [s.name, s.schedule || '', s.enabled ? 'yes' : 'no', s.queue || '', when(s.last_run_at) || 'never',
        el('span', { class: s.last_outcome === 'ran' ? 'ok' : s.last_outcome === 'failed' ? 'warn' : '', title: s.last_reason || '' }, s.last_outcome || '–'),
        s.last_duration_ms !== null && s.last_duration_ms !== undefined ? s.last_duration_ms + ' ms' : '–', when(s.next_run_at) || '–'])));
  }

  let running = false;
  async function refresh() {
    if (running) return;
    running = true;
    try {
      await Promise.allSettled([health(), metrics(), queues(), routing(), services()]);
      $('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
      document.body.dataset.refreshed = String(Date.now());
    } finally { running = false; }
  }

  $('refresh').addEventListener('click', refresh);
  $('token-button').addEventListener('click', () => Engram.tokenDialog());
  window.addEventListener('engram:token', refresh);
  setInterval(() => { if ($('auto').checked && !document.hidden) refresh(); }, REFRESH_MS);
  refresh();
})();
