// The coach's script: the game is its page's address (?opponent=&risk=&rounds=P.Y.T,...
// &upcard=U&learn=1), so a link reopens it and Back undoes a round; each change asks
// /api/coach, which replays the rounds, and draws what it answers. With ?selftest=1 it
// writes the advice it was given into <pre id="selftest">.
'use strict';

const KEYS = ['opponent', 'risk', 'rounds', 'upcard', 'seed', 'learn'];

const $ = (selector) => document.querySelector(selector);

/** The page's address for `game` (its own token and selftest kept). */
function address(game) {
  const page = readSearch(location.search);
  const parts = [];
  for (const key of ['token', 'selftest'].concat(KEYS)) {
    const value = key in game ? game[key] : (KEYS.includes(key) ? undefined : page[key]);
    if (value !== undefined && value !== '') {
      parts.push(encodeURIComponent(key) + '=' + encodeURIComponent(value));
    }
  }
  return '/coach?' + parts.join('&');
}

function currentGame() {
  const page = readSearch(location.search);
  const game = {};
  for (const key of KEYS) if (page[key] !== undefined) game[key] = page[key];
  return game;
}

async function ask(game) {
  const page = readSearch(location.search);
  const parts = [];
  for (const key of KEYS) {
    if (game[key] !== undefined && game[key] !== '') {
      parts.push(encodeURIComponent(key) + '=' + encodeURIComponent(game[key]));
    }
  }
  if (page.token) parts.push('token=' + encodeURIComponent(page.token));
  const response = await fetch('/api/coach?' + parts.join('&'), { cache: 'no-store' });
  if (!response.ok) throw new Error((await response.text()).trim());
  return response.json();
}

function showError(message) {
  const p = $('#error');
  p.textContent = message || '';
  p.hidden = !message;
}

function draw(view) {
  $('#coach-info').textContent =
    view.n + ' cards, ' + view.objective + '; opponent model ' + view.opponent +
    (view.learn ? ' (learned from their bids in this game)' : '') + ', risk ' + view.risk;
  $('#coach-score').textContent = 'score you ' + view.you + ', them ' + view.them +
    '; prizes left ' + (view.prizes_left.join(',') || 'none') +
    '; your cards ' + (view.your_cards.join(',') || 'none') +
    '; theirs ' + (view.their_cards.join(',') || 'none') +
    '; banked ' + view.banked.toFixed(3) + (view.over ? ' — the game is over' : '');
  const body = $('#coach-rounds tbody');
  body.textContent = '';
  for (const r of view.rounds) {
    const row = document.createElement('tr');
    for (const cell of [r.round, r.upcard, r.yours, r.theirs, r.their_loss.toFixed(3), r.banked.toFixed(3)]) {
      const td = document.createElement('td');
      td.textContent = String(cell);
      row.appendChild(td);
    }
    body.appendChild(row);
  }
  const advice = view.advice;
  $('#coach-advice').hidden = !advice;
  if (advice) {
    const mix = Object.entries(advice.mix)
      .filter(([, p]) => p > 5e-7)
      .map(([c, p]) => c + ': ' + p.toFixed(3)).join('  ');
    $('#coach-advice-text').textContent = 'bid ' + advice.suggested + ' (drawn from ' + mix +
      '); the value ' + advice.value.toFixed(3) + ', against the model ' +
      (advice.expected_gain >= 0 ? '+' : '') + advice.expected_gain.toFixed(3) + ' more';
    $('#coach-upcard').value = advice.upcard;
    $('#coach-yours').value = advice.suggested;
  }
  const habits = view.habits;
  $('#coach-habits').textContent = habits.model
    ? 'they bid like ' + habits.model + '; their mean loss ' + habits.mean_loss.toFixed(3) + ' a decision'
    : '';
}

async function go(game, push) {
  try {
    const view = await ask(game);
    if (push) history.pushState(null, '', address(game));
    showError('');
    draw(view);
    return view;
  } catch (e) {
    showError(e.message);
    return null;
  }
}

$('#coach-advise').addEventListener('click', () => {
  const game = currentGame();
  game.upcard = $('#coach-upcard').value;
  go(game, true);
});

$('#coach-play').addEventListener('click', () => {
  const game = currentGame();
  const round = [game.upcard, $('#coach-yours').value, $('#coach-theirs').value].join('.');
  game.rounds = game.rounds ? game.rounds + ',' + round : round;
  delete game.upcard;
  go(game, true);
});

window.addEventListener('popstate', () => go(currentGame(), false));

go(currentGame(), false).then((view) => {
  if (readSearch(location.search).selftest === '1') {
    const pre = $('#selftest');
    pre.textContent = JSON.stringify(view ? { rounds: view.rounds.length, advice: view.advice, banked: view.banked } : { error: $('#error').textContent });
    pre.hidden = false;
  }
});
