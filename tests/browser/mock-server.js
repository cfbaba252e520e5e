'use strict';
// A throwaway test double of the advisor2048 HTTP API, used only where the real service cannot be made to fail on
// demand: the userscript's error paths (a service answering problem+json errors, a service that is slow).
// The happy-path tests (the real game, the GM path, the playground) use the real `advisor2048 serve`.
//
//   node mock-server.js [--mode ok|error503|error422] [--port N]
// prints one JSON line {"port": N} once it listens on 127.0.0.1.
//
// Mode `ok` answers /best-move with the first legal direction in a fixed order (down, left, right, up), which is
// enough to exercise a client by hand; it is not a 2048 player.

const http = require('node:http');

const DIRECTIONS = ['up', 'down', 'left', 'right'];

function slideLeft(row) {
  const tiles = row.filter((v) => v !== 0);
  const out = [];
  let reward = 0;
  for (let i = 0; i < tiles.length; i++) {
    if (i + 1 < tiles.length && tiles[i] === tiles[i + 1]) {
      out.push(tiles[i] * 2);
      reward += tiles[i] * 2;
      i++;
    } else {
      out.push(tiles[i]);
    }
  }
  while (out.length < row.length) out.push(0);
  return { row: out, reward };
}

function transpose(b) {
  return b[0].map((_, c) => b.map((r) => r[c]));
}

function play(board, dir) {
  const flipRows = (b) => b.map((r) => r.slice().reverse());
  let b = board;
  if (dir === 'up' || dir === 'down') b = transpose(b);
  if (dir === 'right' || dir === 'down') b = flipRows(b);
  let reward = 0;
  b = b.map((r) => {
    const s = slideLeft(r);
    reward += s.reward;
    return s.row;
  });
  if (dir === 'right' || dir === 'down') b = flipRows(b);
  if (dir === 'up' || dir === 'down') b = transpose(b);
  const legal = JSON.stringify(b) !== JSON.stringify(board);
  return { board: b, reward, legal };
}

function breakdown(board) {
  const empty = board.flat().filter((v) => v === 0).length;
  return {
    evaluator: 'mock',
    total: empty,
    components: [{ name: 'empty', raw: empty, weight: 1, contribution: empty }],
  };
}

function problem(res, status, title, detail, errors, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/problem+json', ...headers });
  res.end(JSON.stringify({ type: 'about:blank', title, status, detail, errors: errors || [] }));
}

function parseBoard(body) {
  const b = body && body.board;
  if (!Array.isArray(b) || b.length !== 4 || !b.every((r) => Array.isArray(r) && r.length === 4)) return null;
  return b;
}

function handler(mode) {
  return (req, res) => {
    res.setHeader('access-control-allow-origin', '*');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        'access-control-allow-methods': 'GET, POST, OPTIONS',
        'access-control-allow-headers': 'content-type',
      });
      res.end();
      return;
    }
    if (req.method === 'GET' && req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'ok', version: 'mock' }));
      return;
    }
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      if (mode === 'error503') {
        problem(res, 503, 'service saturated', 'every search permit is taken; retry later', [], { 'retry-after': '1' });
        return;
      }
      if (mode === 'error422') {
        problem(res, 422, 'invalid request', 'the request has 1 problem', [
          { pointer: '/board', message: 'mock: every board is rejected' },
        ]);
        return;
      }
      if (req.method !== 'POST' || req.url !== '/best-move') {
        problem(res, 404, 'not found', `no route for ${req.method} ${req.url}`);
        return;
      }
      let body;
      try {
        body = JSON.parse(raw);
      } catch (e) {
        problem(res, 400, 'malformed json', String(e.message));
        return;
      }
      const board = parseBoard(body);
      if (!board) {
        problem(res, 422, 'invalid request', 'bad board', [{ pointer: '/board', message: 'mock wants rows' }]);
        return;
      }
      const moves = DIRECTIONS.map((direction) => {
        const r = play(board, direction);
        return {
          direction,
          legal: r.legal,
          value: r.legal ? r.reward + breakdown(r.board).total : null,
          reward: r.legal ? r.reward : 0,
          board: r.board,
          heuristic: breakdown(r.board),
        };
      });
      const pick = ['down', 'left', 'right', 'up'].find((d) => moves[DIRECTIONS.indexOf(d)].legal) || null;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          direction: pick,
          game_over: pick === null,
          moves,
          search: { profile: 'mock', evaluator: 'mock', depth: 1, nodes: 4, tt_hits: 0, elapsed_ms: 0, truncated: false },
        }),
      );
    });
  };
}

function start(mode = 'ok', port = 0) {
  return new Promise((resolve) => {
    const server = http.createServer(handler(mode));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

module.exports = { start, play };

if (require.main === module) {
  const arg = (name, dflt) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : dflt;
  };
  start(arg('--mode', 'ok'), Number(arg('--port', '0'))).then((s) => {
    console.log(JSON.stringify({ port: s.address().port }));
  });
}
