// The gops dashboard's script: polls api/status and draws the page from it. Text from
// the coordinator (worker names, event messages) goes in as text nodes only, never as
// markup.
//
// Polling rather than server-sent events: the coordinator's HTTP server answers one
// request per connection and closes every connection within 10 s, so that idle or slow
// clients cannot pile up; a stream held open would need an exception to that. One small
// JSON document a second costs the coordinator little, survives its restart without
// special handling, and works the same through any proxy.
"use strict";
(() => {
  const POLL_MS = 1000;
  // the page's own ?token= goes on to api/status as it came (the server decodes both
  // the same way)
  const tokenParam = location.search.slice(1).split("&").find((p) => p.startsWith("token="));
  const api = "api/status" + (tokenParam ? "?" + tokenParam : "");

  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else e.setAttribute(k, String(v));
    }
    for (const c of children) e.append(c instanceof Node ? c : String(c));
    return e;
  }

  const int = (n) => Number(n).toLocaleString("en-US");

  function compact(x) {
    if (x == null || !isFinite(x)) return "–";
    const a = Math.abs(x);
    if (a >= 1e12) return (x / 1e12).toFixed(2) + " T";
    if (a >= 1e9) return (x / 1e9).toFixed(2) + " G";
    if (a >= 1e6) return (x / 1e6).toFixed(2) + " M";
    if (a >= 1e4) return (x / 1e3).toFixed(1) + " k";
    return a >= 100 ? x.toFixed(0) : x.toFixed(1);
  }

  function duration(seconds) {
    const s = Math.max(0, Math.round(seconds));
    const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600);
    const m = Math.floor((s % 3600) / 60), r = s % 60;
    const two = (v) => String(v).padStart(2, "0");
    if (d) return d + "d " + h + "h";
    if (h) return h + "h " + two(m) + "m";
    if (m) return m + "m " + two(r) + "s";
    return r + "s";
  }

  const ago = (seconds) => Math.max(0, Math.round(seconds)) + "s ago";
  const pct = (done, total) => (total > 0 ? Math.min(100, (100 * done) / total) : 0);
  const clock = (ms) => new Date(ms).toLocaleTimeString("en-GB", { hour12: false });

  function bar(done, total, attrs) {
    const fill = el("div", { class: "fill" });
    fill.style.width = pct(done, total).toFixed(2) + "%";
    return el("div", Object.assign({
      class: "bar", role: "progressbar", "aria-valuemin": 0, "aria-valuemax": total,
      "aria-valuenow": done, "data-done": done, "data-total": total,
    }, attrs || {}), fill);
  }

  function setState(state, text) {
    const pill = $("state");
    pill.dataset.state = state;
    pill.textContent = text;
  }

  function summary(s) {
    const done = s.layers.reduce((a, l) => a + l.done, 0);
    const total = s.layers.reduce((a, l) => a + l.slices, 0);
    $("overall").textContent = int(done) + " / " + int(total) + " slices";
    // the bar and its text show the same thing: the share of the work (matrix games)
    // done; slices differ in size by orders of magnitude, so their count is no measure
    const allGames = s.layer_games.reduce((a, g) => a + g, 0);
    const work = Math.max(0, Math.min(100,
      allGames > 0 ? 100 * (1 - s.games_left / allGames) : (s.complete ? 100 : 0)));
    $("overall-bar").replaceWith(bar(Math.round(10 * work), 1000,
      { id: "overall-bar", "data-complete": s.complete, "data-work": work.toFixed(1) }));
    const layersDone = s.layers.filter((l) => l.complete).length;
    $("overall-sub").textContent = layersDone + " of " + s.layers.length + " layers · " +
      work.toFixed(1) + "% of the work";

    // the speed now (the last minute's), as the time left uses; the average since the
    // coordinator started (before any worker joined, too) only beside it
    const recent = s.recent_games_per_second;
    $("rate").textContent = recent == null ? "–" : compact(recent) + " games/s";
    $("rate-sub").textContent = (recent == null ? "no speed now · " : "last minute · ") +
      compact(s.games_per_second) + " average · " + int(s.games_this_run) + " games this run";

    if (s.complete) {
      $("eta").textContent = "done";
    } else if (s.eta_seconds == null) {
      $("eta").textContent = "–";
    } else {
      $("eta").textContent = duration(s.eta_seconds);
    }
    // a rough estimate: the games left at the last minute's speed (the average since
    // the start is pulled down for long by the small early layers, slow per game)
    $("eta-sub").textContent = (s.complete ? "" : s.eta_seconds == null ? "no speed now · " :
      "at the last minute's speed · ") + "up " + duration(s.uptime_seconds);

    $("worker-count").textContent = s.workers.length + " live";
    const problems = $("problems");
    problems.replaceChildren();
    const sessions = s.workers_registered === 1 ? "session" : "sessions";
    const parts = [[s.workers_registered, sessions, false],
      [s.rejected_submissions, "rejected", true], [s.refused_calls, "refused calls", true],
      [s.disagreements, "disagreements", true], [s.repaired_slices, "repaired", true]];
    let first = true;
    for (const [count, what, alarming] of parts) {
      if (alarming && !count) continue;
      if (!first) problems.append(" · ");
      first = false;
      problems.append(el("span", { class: alarming ? "bad" : "" }, int(count) + " " + what));
    }

    const failure = $("failure");
    const alarm = s.failure ? "The coordinator is stopping: " + s.failure :
      s.stall ? "The run does not move: " + s.stall : "";
    failure.hidden = !alarm;
    failure.textContent = alarm;
  }

  function layers(s) {
    const rows = [];
    for (const l of s.layers) {
      const open = l.k === s.open_layer;
      rows.push(el("span", { class: "k" + (open ? " open-layer" : "") }, "k = " + l.k));
      rows.push(bar(l.done, l.slices, { "data-k": l.k, "data-complete": l.complete, class: "bar layer-bar" }));
      rows.push(el("span", { class: "count" }, int(l.done) + " / " + int(l.slices),
        l.complete ? el("span", { class: "done-mark", title: "complete" }, " ✓") : ""));
    }
    $("layers").replaceChildren(...rows);
  }

  function shards(s) {
    const box = $("shards");
    if (s.open_layer == null || !s.shards) {
      $("open-k").textContent = "";
      box.replaceChildren(el("div", { class: "quiet-line" },
        s.complete ? "Every layer is complete." : "No layer is open."));
      return;
    }
    $("open-k").textContent = "k = " + s.open_layer;
    const { pending, leased, done } = s.shards;
    const total = pending + leased + done;
    const part = (cls, n) => {
      const d = el("div", { class: cls, title: int(n) + " " + cls });
      d.style.width = pct(n, total).toFixed(2) + "%";
      return d;
    };
    const stack = el("div", {
      class: "stack", id: "shard-stack", "data-pending": pending, "data-leased": leased,
      "data-done": done, role: "img",
      "aria-label": done + " shards done, " + leased + " leased, " + pending + " pending",
    }, part("done", done), part("leased", leased), part("pending", pending));
    const legend = el("div", { class: "legend" },
      el("span", { class: "done" }, int(done) + " done"),
      el("span", { class: "leased" }, int(leased) + " leased"),
      el("span", { class: "pending" }, int(pending) + " pending"),
      el("span", {}, int(total) + " shards"));
    box.replaceChildren(stack, legend);
  }

  function workers(s) {
    const body = $("workers");
    if (!s.workers.length) {
      body.replaceChildren(el("tr", {}, el("td", { colspan: 7, class: "empty" }, "no worker heard from lately")));
      return;
    }
    // silent this long: more than a busy worker's calls are ever apart (it heartbeats
    // every third of a lease, 20 s by default)
    const QUIET_SECONDS = 30;
    body.replaceChildren(...s.workers.map((w) => {
      const heard = w.seconds_since_heard;
      return el("tr", { "data-worker": w.id },
        el("td", { "data-label": "Name", title: "id " + w.id }, w.name || "(unnamed)"),
        el("td", { "data-label": "Threads" }, int(w.threads)),
        el("td", { "data-label": "Shards" }, w.shards == null ? "–" : int(w.shards)),
        el("td", { "data-label": "Slices" }, int(w.slices)),
        el("td", { "data-label": "Games/s" }, compact(w.games_per_second)),
        el("td", { "data-label": "Last heard", class: heard > QUIET_SECONDS ? "quiet" : "" },
          heard == null ? "–" : ago(heard)),
        el("td", { "data-label": "Rejected", class: w.rejected ? "bad" : "" }, int(w.rejected)));
    }));
  }

  const KINDS = {
    layer_complete: "layer complete", run_complete: "run complete", layer_released: "data removed",
    worker_joined: "worker joined", worker_left: "worker left", lease_expired: "lease expired",
    submission_rejected: "rejected", shard_failed: "shard failed", banned: "banned", call_refused: "call refused",
    disagreement: "disagreement", slice_repaired: "repaired", store_failed: "store failed",
    run_stopped: "run stopped", dispute_settled: "dispute settled",
    copy_blamed: "bad copy", late_replacement: "verify the db",
  };

  function events(s) {
    const list = $("events");
    if (!s.events.length) {
      list.replaceChildren(el("li", { class: "none" }, "nothing yet"));
      return;
    }
    list.replaceChildren(...s.events.slice().reverse().map((e) => el("li", { "data-kind": e.kind, "data-seq": e.seq },
      el("time", { datetime: new Date(e.unix_ms).toISOString() }, clock(e.unix_ms)),
      el("span", { class: "ago" }, ago((s.now_unix_ms - e.unix_ms) / 1000)),
      el("span", { class: "kind" }, KINDS[e.kind] || e.kind),
      el("span", { class: "msg" }, e.message),
      e.count > 1 ? el("span", { class: "count" }, "× " + int(e.count)) : "")));
  }

  function render(s) {
    $("game").textContent = s.n + " cards, " + s.objective;
    document.title = "gops " + s.n + " " + s.objective + (s.complete ? " · complete" : "");
    if (s.failure) setState("failure", "stopping");
    else if (s.complete) setState("complete", "complete");
    else setState("running", "running · layer " + s.open_layer);
    $("notice").hidden = true;
    summary(s);
    layers(s);
    shards(s);
    workers(s);
    events(s);
    $("updated").textContent = "updated " + clock(s.now_unix_ms) + " · every second";
    document.body.dataset.loaded = "true";
  }

  function trouble(state, text, notice) {
    setState(state, text);
    const n = $("notice");
    n.hidden = false;
    n.textContent = notice;
  }

  async function poll() {
    try {
      const answer = await fetch(api, { cache: "no-store" });
      if (answer.status === 401) {
        trouble("refused", "token refused",
          "The coordinator wants its token: open this page as /?token=TOKEN, or reload and give the token as the password.");
      } else if (!answer.ok) {
        trouble("offline", "error " + answer.status, "The coordinator answered " + answer.status + "; trying again.");
      } else {
        render(await answer.json());
      }
    } catch (e) {
      trouble("offline", "unreachable", "The coordinator does not answer; trying again every second.");
    }
    setTimeout(poll, POLL_MS);
  }

  poll();
})();
