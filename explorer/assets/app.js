// The GOPS explorer's script: talks to the server's API (carrying the page's ?token= on
// to every call), draws the state, its trail and the strategy charts (SVG built here,
// no library), steps into subgames, plays against the equilibrium, keeps the state shown
// in the page's address (?a=&b=&prizes=&diff=, so that a link opens it and Back steps
// back), and with ?selftest=1 drives its own click handlers and writes what it saw into
// <pre id="selftest">.
'use strict';

const SVG_NS = 'http://www.w3.org/2000/svg';
const PAGE = readSearch(location.search);
const TOKEN = PAGE.token || null;

let N = 0;
let OBJECTIVE = 'points';
/** The states stepped through: [{state, label}], the last one shown. */
let trail = [];
/** The action in flight (a click's work); the self-test waits on it. */
let pending = Promise.resolve();
/** The game against the bot, as the server last showed it. */
let played = null;

// ---------------------------------------------------------------- helpers

function $(selector, root) {
  return (root || document).querySelector(selector);
}

function el(tag, props, children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('data-')) node.dataset[key.slice(5).replace(/-(.)/g, (_, c) => c.toUpperCase())] = value;
    else node.setAttribute(key, value);
  }
  for (const child of children || []) node.append(child);
  return node;
}

function svgEl(tag, attrs, children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  for (const child of children || []) node.append(child);
  return node;
}

/** A card as the command line writes it: its number (faces such as "A" would read as
 *  player A, and "J", "Q", "K" as nothing the rest of gops says). */
function label(card) {
  return String(card);
}

function cardEl(card, kind, tag) {
  return el(tag || 'span', { class: 'card ' + kind, text: label(card), title: 'card ' + card });
}

function cardsEl(node, cards, kind) {
  node.replaceChildren(...(cards.length ? cards.map((c) => cardEl(c, kind)) : [el('span', { class: 'card none', text: 'none' })]));
}

/** A probability or value to 6 digits; a rounding of -0 is shown as 0. */
function fixed6(x) {
  const text = Number(x).toFixed(6);
  return text === '-0.000000' ? '0.000000' : text;
}

class ApiError extends Error {}

/** Calls the API; the answer's JSON, or an ApiError with the server's one-line reason. */
async function api(path, params, method) {
  const parts = [];
  for (const [key, value] of Object.entries(params || {})) {
    parts.push(encodeURIComponent(key) + '=' + encodeURIComponent(value));
  }
  if (TOKEN !== null) parts.push('token=' + encodeURIComponent(TOKEN));
  const url = path + (parts.length ? '?' + parts.join('&') : '');
  // an answer that takes over a second is a solve on demand (a book): show its progress
  const watch = path === '/api/solving' ? null : setTimeout(watchSolving, SOLVING_AFTER_MS);
  let response;
  try {
    response = await fetch(url, { method: method || 'GET', cache: 'no-store' });
  } finally {
    if (watch !== null) {
      clearTimeout(watch);
      stopWatchingSolving();
    }
  }
  if (!response.ok) {
    const reason = (await response.text()).trim();
    throw new ApiError(reason || response.status + ' ' + response.statusText);
  }
  return response.json();
}

const SOLVING_AFTER_MS = 1000;
const SOLVING_EVERY_MS = 500;
/** How many waiting requests watch the solves under way; whether the poll runs, and its timer. */
let solvingWatchers = 0;
let solvingPolling = false;
let solvingTimer = null;
/** Counts the polls started, so that one left over from an earlier wait stops. */
let solvingRound = 0;

/** Shows the solves on demand under way until the last waiting request is answered. */
function watchSolving() {
  solvingWatchers += 1;
  if (!solvingPolling) {
    solvingPolling = true;
    solvingRound += 1;
    pollSolving(solvingRound);
  }
}

function stopWatchingSolving() {
  if (solvingWatchers === 0) return;
  solvingWatchers -= 1;
  if (solvingWatchers === 0) {
    clearTimeout(solvingTimer);
    solvingPolling = false;
    $('#solving').hidden = true;
  }
}

async function pollSolving(round) {
  let solving = [];
  try {
    solving = (await api('/api/solving')).solving;
  } catch (e) {
    // the view is a courtesy: the request it watches reports its own errors
  }
  if (solvingWatchers === 0 || round !== solvingRound) return;
  const node = $('#solving');
  if (solving.length === 0) {
    node.hidden = true;
  } else {
    const s = solving[solving.length - 1];
    const share = s.total > 0 ? Math.min(1, s.done / s.total) : 0;
    $('#solving-text').textContent = 'solving on demand: the subtree with ' + s.cards_left +
      ' cards left (prizes ' + s.prizes.join(', ') + '), ' + Math.round(100 * share) + ' %, ' +
      s.seconds.toFixed(0) + ' s' + (solving.length > 1 ? ' (' + solving.length + ' solves)' : '');
    $('#solving-bar').value = share;
    node.hidden = false;
  }
  solvingTimer = setTimeout(() => pollSolving(round), SOLVING_EVERY_MS);
}

function stateParams(state) {
  return { a: state.a.join(','), b: state.b.join(','), prizes: state.prizes.join(','), diff: state.diff };
}

function fullState() {
  const all = Array.from({ length: N }, (_, i) => i + 1);
  return { a: all.slice(), b: all.slice(), prizes: all.slice(), diff: 0 };
}

function showError(error) {
  const node = $('#error');
  node.textContent = String((error && error.message) || error);
  node.hidden = false;
}

function clearError() {
  $('#error').hidden = true;
}

/** Runs a click's work, shows its failure, and lets the self-test wait for it. */
function track(promise) {
  pending = promise.then(() => undefined, showError);
  return pending;
}

/** Clicks and Enter/Space on `node` run `action`. */
function onActivate(node, action) {
  node.addEventListener('click', action);
  node.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      action(event);
    }
  });
}

// ---------------------------------------------------------------- explore

async function showState(state, known) {
  clearError();
  const answer = known || (await api('/api/value', stateParams(state)));
  const shown = { a: answer.a, b: answer.b, prizes: answer.prizes, diff: answer.diff };
  const strategies = await Promise.all(
    shown.prizes.map((u) => api('/api/strategy', Object.assign(stateParams(shown), { upcard: u }))),
  );
  const box = $('#state');
  box.dataset.a = shown.a.join(',');
  box.dataset.b = shown.b.join(',');
  box.dataset.prizes = shown.prizes.join(',');
  box.dataset.diff = String(shown.diff);
  box.dataset.value = String(answer.value);
  cardsEl($('#show-a'), shown.a, 'a');
  cardsEl($('#show-b'), shown.b, 'b');
  cardsEl($('#show-prizes'), shown.prizes, 'prize');
  $('#show-diff').textContent = String(shown.diff);
  $('#show-value').textContent = fixed6(answer.value);
  const panels = strategies.slice().reverse().map((game) => upcardPanel(shown, game));
  if (!panels.length) {
    panels.push(el('p', { class: 'hint', text: 'No prize left: the game is over, with A − B = ' + shown.diff + '.' }));
  }
  $('#upcards').replaceChildren(...panels);
  renderTrail();
  fillEditor(shown);
  return shown;
}

/** One upcard: the value after the reveal and both players' strategies. */
function upcardPanel(state, game) {
  const panel = el('div', { class: 'upcard', 'data-upcard': String(game.upcard) });
  const title = el('h2', {}, [
    'Prize ',
    cardEl(game.upcard, 'prize'),
    ' turned up',
    el('span', { class: 'after', text: '· value after the reveal ' + fixed6(game.value) }),
  ]);
  const pickLine = el('p', { class: 'pick-line', text: 'Click a bid of A and a bid of B to play this round.' });
  const picks = { a: null, b: null };
  const choose = (side, card) => {
    picks[side] = picks[side] === card ? null : card;
    for (const bar of panel.querySelectorAll('.bar.' + side)) {
      bar.classList.toggle('picked', Number(bar.dataset.card) === picks[side]);
    }
    if (picks.a !== null && picks.b !== null) {
      pickLine.textContent = 'A bids ' + label(picks.a) + ', B bids ' + label(picks.b) + ': stepping in…';
      return track(step(game.upcard, picks.a, picks.b));
    }
    pickLine.textContent = picks.a !== null
      ? 'A bids ' + label(picks.a) + ': now a bid of B.'
      : picks.b !== null ? 'B bids ' + label(picks.b) + ': now a bid of A.' : 'Click a bid of A and a bid of B to play this round.';
    return track(Promise.resolve());
  };
  const charts = el('div', { class: 'charts' }, [
    chart('A bids', 'a', state.a, game.strategy_a, choose),
    chart('B bids', 'b', state.b, game.strategy_b, choose),
  ]);
  panel.append(title, charts, pickLine);
  return panel;
}

/** A horizontal bar chart of a mixed strategy: one clickable row per card. */
function chart(title, side, cards, probabilities, choose) {
  const row = 22;
  const width = 300;
  const barX = 34;
  const barWidth = 170;
  const svg = svgEl('svg', {
    viewBox: '0 0 ' + width + ' ' + (row * cards.length + 4),
    role: 'group',
    'aria-label': title,
  });
  cards.forEach((card, i) => {
    const p = probabilities[i];
    const y = 2 + i * row;
    const bar = svgEl('g', {
      class: 'bar ' + side,
      'data-card': String(card),
      'data-p': String(p),
      tabindex: '0',
      role: 'button',
      'aria-label': title + ' ' + label(card) + ' with probability ' + fixed6(p),
    }, [
      svgEl('rect', { class: 'track', x: 0, y: y, width: width, height: row - 3, rx: 3 }),
      svgEl('text', { class: 'card-label', x: 6, y: y + row - 8 }, [label(card)]),
      svgEl('rect', { class: 'fill', x: barX, y: y + 3, width: Math.max(0, barWidth * p).toFixed(2), height: row - 9, rx: 2 }),
      svgEl('text', { class: 'prob', x: barX + barWidth + 8, y: y + row - 8 }, [fixed6(p)]),
    ]);
    onActivate(bar, () => choose(side, card));
    svg.append(bar);
  });
  return el('div', { class: 'chart' }, [el('h3', { text: title }), svg]);
}

async function step(upcard, bidA, bidB) {
  const from = trail[trail.length - 1].state;
  const answer = await api('/api/step', Object.assign(stateParams(from), { upcard: upcard, bid_a: bidA, bid_b: bidB }));
  const next = { a: answer.a, b: answer.b, prizes: answer.prizes, diff: answer.diff };
  trail.push({ state: next, label: label(upcard) + ' up: A ' + label(bidA) + ', B ' + label(bidB) });
  await showState(next, answer);
  remember('push');
}

// ---------------------------------------------------------------- the address

/** The page's address for `state`: its own parameters (token, selftest) kept, the state's
 * replaced; the whole game is the bare address. */
function addressOf(state) {
  const kept = Object.entries(PAGE).filter(([key]) => !STATE_KEYS.includes(key));
  const isStart = same(state, fullState());
  const pairs = kept.concat(isStart ? [] : Object.entries(stateParams(state)));
  const search = pairs.map(([key, value]) => encodeURIComponent(key) + '=' + encodeURIComponent(value)).join('&');
  return location.pathname + (search ? '?' + search : '');
}

const STATE_KEYS = ['a', 'b', 'prizes', 'diff'];

function same(x, y) {
  return JSON.stringify([x.a, x.b, x.prizes, Number(x.diff)]) === JSON.stringify([y.a, y.b, y.prizes, Number(y.diff)]);
}

/** Writes the shown state into the address: a new history entry ('push'), or in place. */
function remember(how) {
  const shown = trail[trail.length - 1].state;
  const entry = { trail: trail };
  if (how === 'push') history.pushState(entry, '', addressOf(shown));
  else history.replaceState(entry, '', addressOf(shown));
}

/** The state a link names (?a=&b=&prizes=, diff optional), as the API's parameters; null
 * when the address names none. */
function linkedState() {
  if (PAGE.a === undefined && PAGE.b === undefined && PAGE.prizes === undefined) return null;
  return { a: PAGE.a || '', b: PAGE.b || '', prizes: PAGE.prizes || '', diff: PAGE.diff || '0' };
}

/** Back and Forward: the trail that entry held, shown again. */
async function onHistory(event) {
  if (event.state && Array.isArray(event.state.trail) && event.state.trail.length) {
    trail = event.state.trail;
  } else {
    trail = [{ state: fullState(), label: 'Start' }];
  }
  await showState(trail[trail.length - 1].state);
}

function renderTrail() {
  const nav = $('#trail');
  const items = [];
  trail.forEach((step, i) => {
    if (i > 0) items.push(el('span', { class: 'sep', text: '›' }));
    const last = i === trail.length - 1;
    const crumb = el('button', { class: 'crumb' + (last ? ' current' : ''), type: 'button', text: step.label });
    if (last) crumb.setAttribute('aria-current', 'step');
    else onActivate(crumb, () => track(goBack(i)));
    items.push(crumb);
  });
  nav.replaceChildren(...items);
}

async function goBack(index) {
  trail = trail.slice(0, index + 1);
  await showState(trail[index].state);
  remember('push');
}

// ---------------------------------------------------------------- the state editor

function editorRow(node, kind) {
  const buttons = [];
  for (let c = 1; c <= N; c++) {
    const button = cardEl(c, kind, 'button');
    button.type = 'button';
    button.dataset.card = String(c);
    button.addEventListener('click', () => button.classList.toggle('off'));
    buttons.push(button);
  }
  node.replaceChildren(...buttons);
}

function fillEditor(state) {
  for (const [id, cards] of [['#edit-a', state.a], ['#edit-b', state.b], ['#edit-prizes', state.prizes]]) {
    for (const button of $(id).children) button.classList.toggle('off', !cards.includes(Number(button.dataset.card)));
  }
  $('#edit-diff').value = String(state.diff);
}

function readEditor() {
  const pick = (id) => Array.from($(id).children).filter((b) => !b.classList.contains('off')).map((b) => Number(b.dataset.card));
  return { a: pick('#edit-a'), b: pick('#edit-b'), prizes: pick('#edit-prizes'), diff: $('#edit-diff').value.trim() || '0' };
}

async function applyEditor(state, name) {
  const problem = $('#edit-error');
  problem.hidden = true;
  let answer;
  try {
    answer = await api('/api/value', stateParams(state));
  } catch (error) {
    problem.textContent = String(error.message || error);
    problem.hidden = false;
    return;
  }
  const chosen = { a: answer.a, b: answer.b, prizes: answer.prizes, diff: answer.diff };
  trail = [{ state: chosen, label: name }];
  await showState(chosen, answer);
  remember('push');
}

// ---------------------------------------------------------------- play

function renderPlay(game) {
  played = game;
  $('#play-board').hidden = false;
  const round = game.rounds.length + (game.over ? 0 : 1);
  const board = $('#play-board');
  board.dataset.you = String(game.you);
  board.dataset.bot = String(game.bot);
  board.dataset.over = String(game.over);
  board.dataset.opponent = game.opponent;
  $('#play-score').textContent = (game.over ? 'Game over' : 'Round ' + round + ' of ' + game.n) + ' · you ' + game.you + ', bot (' + game.opponent + ') ' + game.bot;
  $('#play-turn').hidden = game.over;
  if (!game.over) {
    $('#play-upcard').replaceChildren(cardEl(game.upcard, 'prize big'));
    const hand = game.your_cards.map((c) => {
      const button = cardEl(c, 'a', 'button');
      button.type = 'button';
      button.dataset.card = String(c);
      button.title = 'bid ' + label(c);
      button.addEventListener('click', () => {
        if (played !== game) return; // a bid for this turn is already on its way
        played = null;
        track(bid(game.game, c));
      });
      return button;
    });
    $('#play-hand').replaceChildren(...hand);
    cardsEl($('#play-bot'), game.bot_cards, 'b');
    cardsEl($('#play-prizes'), game.prizes_left.filter((c) => c !== game.upcard), 'prize');
  }
  const last = game.rounds[game.rounds.length - 1];
  $('#play-last').textContent = last ? roundLine(last) : 'The first prize is up; the bot has sealed its bid.';
  const result = $('#play-result');
  result.hidden = !game.over;
  result.textContent = game.over ? 'Final score: you ' + game.you + ', bot ' + game.bot + ': ' + game.result + '.' : '';
  // green for a win, red for a loss, neutral for a tie
  const outcome = game.you > game.bot ? 'won' : game.you < game.bot ? 'lost' : 'tied';
  result.className = 'result ' + outcome;
  $('#play-history').replaceChildren(...game.rounds.map((r) => el('li', { text: roundLine(r) })));
}

function roundLine(r) {
  const outcome = r.winner === 'you' ? 'you win ' + label(r.prize) : r.winner === 'bot' ? 'the bot wins ' + label(r.prize) : 'a tie: nobody wins ' + label(r.prize);
  return 'Prize ' + label(r.prize) + ': you bid ' + label(r.you) + ', the bot bid ' + label(r.bot) + ': ' + outcome + '.';
}

async function newGame() {
  clearError();
  const opponent = $('#play-opponent').value.trim();
  renderPlay(await api('/api/play/new', opponent ? { opponent: opponent } : {}, 'POST'));
}

async function bid(id, card) {
  clearError();
  renderPlay(await api('/api/play/bid', { game: id, card: card }, 'POST'));
}

function showTab(name) {
  $('#explore').hidden = name !== 'explore';
  $('#play').hidden = name !== 'play';
  $('#tab-explore').classList.toggle('active', name === 'explore');
  $('#tab-play').classList.toggle('active', name === 'play');
}

// ---------------------------------------------------------------- start

async function start() {
  const game = await api('/api/game');
  N = game.n;
  OBJECTIVE = game.objective;
  $('#game-info').textContent = N + ' cards, objective ' + OBJECTIVE + (game.complete ? '' : ' (not completely solved)');
  $('#value-label').textContent = OBJECTIVE === 'win'
    ? 'Value for A, P(A wins) − P(B wins)'
    : 'Value for A, expected score difference A − B from here on';
  editorRow($('#edit-a'), 'a');
  editorRow($('#edit-b'), 'b');
  editorRow($('#edit-prizes'), 'prize');
  onActivate($('#tab-explore'), () => showTab('explore'));
  onActivate($('#tab-play'), () => showTab('play'));
  $('#edit-apply').addEventListener('click', () => track(applyEditor(readEditor(), 'Chosen state')));
  $('#edit-start').addEventListener('click', () => track(applyEditor(fullState(), 'Start')));
  $('#play-new').addEventListener('click', () => track(newGame()));
  window.addEventListener('popstate', (event) => track(onHistory(event)));
  trail = [{ state: fullState(), label: 'Start' }];
  const linked = linkedState();
  if (linked !== null) {
    // a link to a state: shown after the start, so that the trail leads back to it
    try {
      const answer = await api('/api/value', linked);
      const state = { a: answer.a, b: answer.b, prizes: answer.prizes, diff: answer.diff };
      if (!same(state, fullState())) trail.push({ state: state, label: 'Linked state' });
      await showState(state, answer);
      remember('replace');
      return;
    } catch (error) {
      await showState(trail[0].state);
      showError(new Error('The linked state cannot be shown: ' + ((error && error.message) || error)));
      remember('replace');
      return;
    }
  }
  await showState(trail[0].state);
  remember('replace');
}

// ---------------------------------------------------------------- self-test

/** Through the page's own handlers: a chart against the API, a step and the trail
 * back, and a whole game against the bot. */
async function selftest() {
  const out = { ok: false, checks: {} };
  const click = async (node) => {
    if (!node) throw new Error('nothing to click');
    node.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true }));
    await pending;
  };
  const shownState = () => {
    const box = $('#state').dataset;
    const list = (text) => (text ? text.split(',').map(Number) : []);
    return { a: list(box.a), b: list(box.b), prizes: list(box.prizes), diff: Number(box.diff), value: Number(box.value) };
  };
  const crumbs = () => Array.from(document.querySelectorAll('#trail .crumb')).map((c) => c.textContent);
  // the address names the state shown (the whole game: no state in it)
  const addressHolds = (state) => {
    const named = readSearch(location.search);
    if (same(state, fullState())) return STATE_KEYS.every((key) => named[key] === undefined);
    return named.a === state.a.join(',') && named.b === state.b.join(',')
      && named.prizes === state.prizes.join(',') && Number(named.diff) === state.diff;
  };
  const travel = async (move) => {
    const moved = new Promise((resolve, reject) => {
      window.addEventListener('popstate', resolve, { once: true });
      setTimeout(() => reject(new Error('no history entry to go to')), 5000);
    });
    move();
    await moved;
    await pending;
  };
  try {
    await pending;
    const begin = shownState();
    const crumbsBefore = crumbs().length;
    out.checks.address_start = addressHolds(begin);
    // a strategy chart shows what the API answers for the same state
    const panel = $('.upcard');
    const upcard = Number(panel.dataset.upcard);
    const bars = (side) => Array.from(panel.querySelectorAll('.bar.' + side)).map((g) => ({
      card: Number(g.dataset.card),
      text: $('text.prob', g).textContent,
    }));
    const shownA = bars('a');
    const shownB = bars('b');
    const answer = await api('/api/strategy', Object.assign(stateParams(begin), { upcard: upcard }));
    const agrees = (shown, cards, probabilities) => shown.length === cards.length
      && shown.every((s, i) => s.card === cards[i] && Math.abs(Number(s.text) - probabilities[i]) <= 5.000001e-7);
    out.chart = {
      state: begin,
      upcard: upcard,
      cards_a: shownA.map((s) => s.card),
      strategy_a: shownA.map((s) => s.text),
      cards_b: shownB.map((s) => s.card),
      strategy_b: shownB.map((s) => s.text),
    };
    out.checks.chart_matches_api = agrees(shownA, answer.a, answer.strategy_a) && agrees(shownB, answer.b, answer.strategy_b);
    // a pair of bids steps into the subgame: A's likeliest bid, and B's likeliest other
    // card (so that the round has a winner and the score moves)
    const likeliest = (shown) => shown.reduce((best, s) => (Number(s.text) > Number(best.text) ? s : best)).card;
    const bidA = likeliest(shownA);
    const others = shownB.filter((s) => s.card !== bidA);
    const bidB = likeliest(others.length ? others : shownB);
    await click($('.bar.a[data-card="' + bidA + '"]', panel));
    await click($('.bar.b[data-card="' + bidB + '"]', panel));
    const after = shownState();
    const expected = await api('/api/step', Object.assign(stateParams(begin), { upcard: upcard, bid_a: bidA, bid_b: bidB }));
    out.step = { upcard: upcard, bid_a: bidA, bid_b: bidB, state: after, trail: crumbs() };
    out.checks.step_state = same(after, expected) && after.value === expected.value;
    out.checks.step_trail = crumbs().length === crumbsBefore + 1;
    out.checks.step_panels = document.querySelectorAll('.upcard').length === after.prizes.length;
    out.checks.address_step = addressHolds(after);
    // the browser's Back and Forward step through the same states
    await travel(() => history.back());
    out.checks.history_back = same(shownState(), begin) && crumbs().length === crumbsBefore && addressHolds(begin);
    await travel(() => history.forward());
    out.checks.history_forward = same(shownState(), after) && crumbs().length === crumbsBefore + 1 && addressHolds(after);
    // the trail leads back
    await click(document.querySelectorAll('#trail .crumb')[crumbsBefore - 1]);
    out.back = { state: shownState(), trail: crumbs(), address: location.search };
    out.checks.trail_back = same(out.back.state, begin) && crumbs().length === crumbsBefore && addressHolds(begin);
    // a whole game against the bot
    await click($('#tab-play'));
    await click($('#play-new'));
    let bids = 0;
    while ($('#play-board').dataset.over !== 'true' && bids <= N) {
      await click($('#play-hand button.card'));
      bids += 1;
    }
    const board = $('#play-board').dataset;
    out.play = {
      bids: bids,
      rounds: document.querySelectorAll('#play-history li').length,
      you: Number(board.you),
      bot: Number(board.bot),
      result: $('#play-result').hidden ? null : $('#play-result').textContent,
    };
    out.checks.play_finished = out.play.result !== null && out.play.rounds === N && bids === N;
    // the final line's colour follows the outcome: a loss is never shown as a win
    const shownAs = getComputedStyle($('#play-result')).color;
    const colourOf = (name) => {
      const probe = el('span', { class: 'result ' + name });
      document.body.append(probe);
      const colour = getComputedStyle(probe).color;
      probe.remove();
      return colour;
    };
    const outcome = out.play.you > out.play.bot ? 'won' : out.play.you < out.play.bot ? 'lost' : 'tied';
    out.play.outcome = outcome;
    out.checks.play_result_colour = shownAs === colourOf(outcome)
      && colourOf('won') !== colourOf('lost') && colourOf('lost') !== colourOf('tied');
    out.checks.play_equilibrium_by_default = board.opponent === 'equilibrium';
    // another bot, named on the page: the upcard rule bids the card nearest the prize up
    $('#play-opponent').value = 'upcard';
    await click($('#play-new'));
    const turnedUp = played.upcard;
    const held = played.bot_cards.slice();
    await click($('#play-hand button.card'));
    const first = played.rounds[0];
    const nearest = held.reduce((best, c) => (Math.abs(c - turnedUp) < Math.abs(best - turnedUp) ? c : best), held[0]);
    out.checks.play_named_bot = $('#play-board').dataset.opponent === 'upcard' && first.bot === nearest;
    // a name that is no agent: the page says why, and keeps the game it has
    $('#play-opponent').value = 'bluff';
    await click($('#play-new'));
    out.checks.play_unknown_bot = !$('#error').hidden && $('#error').textContent.includes('bluff')
      && $('#play-board').dataset.opponent === 'upcard';
    out.ok = Object.values(out.checks).every(Boolean);
  } catch (error) {
    out.error = String((error && error.message) || error);
  }
  const pre = $('#selftest');
  pre.textContent = JSON.stringify(out);
  pre.hidden = false;
}

track(start());
if (PAGE.selftest === '1') {
  pending.then(selftest);
}
