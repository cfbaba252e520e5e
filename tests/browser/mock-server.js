'use strict';
// A test double of the advisor2048 HTTP API for the answers the real service cannot be made to give on demand:
// every POST is answered with a problem+json error, or (mode noOdds) a service that gives no reach odds: a request
// with "odds" is refused with a 422 at /odds, as an older service or one without an odds model refuses it, and one
// without is advised "left". The happy paths (the real game, the GM path, the playground) use the real
// `advisor2048 serve`.
//
//   node mock-server.js --mode error503|error422|noOdds [--port N]    prints {"port": N} once it listens on 127.0.0.1

const http = require('node:http');

const ANSWERS = {
  // The service is saturated: 503 with Retry-After, which a client should honour.
  error503: {
    status: 503,
    headers: { 'retry-after': '1' },
    body: { title: 'service saturated', detail: 'every search permit is taken; retry later', errors: [] },
  },
  // The request is well-formed JSON but invalid: 422 naming the place; retrying it as is cannot help.
  error422: {
    status: 422,
    headers: {},
    body: {
      title: 'invalid request',
      detail: 'the request has 1 problem',
      errors: [{ pointer: '/board', message: 'mock: every board is rejected' }],
    },
  },
  // A service that gives no reach odds (noOdds mode): the odds field is refused where it is.
  oddsRefused: {
    status: 422,
    headers: {},
    body: {
      title: 'invalid request',
      detail: 'the request has 1 problem',
      errors: [{ pointer: '/odds', message: 'mock: no reach odds here' }],
    },
  },
};

/** The noOdds service's answer to a request body: a 422 at /odds when it asks for odds, else "left" for its board. */
function withoutOdds(body) {
  if (body && 'odds' in body) {
    return ANSWERS.oddsRefused;
  }
  const moves = ['up', 'down', 'left', 'right'].map((direction, i) => ({
    direction,
    legal: true,
    value: 100 + (direction === 'left' ? 50 : i),
    reward: 0,
    board: body && body.board,
    heuristic: null,
  }));
  return {
    status: 200,
    headers: {},
    json: {
      direction: 'left',
      game_over: false,
      board: body && body.board,
      moves,
      search: { profile: 'mock', evaluator: 'mock', depth: 1, target_depth: 1, nodes: 4, tt_hits: 0, elapsed_ms: 0.1, truncated: false },
    },
  };
}

function handler(mode) {
  const answer = ANSWERS[mode];
  if (!answer && mode !== 'noOdds') {
    throw new Error(`unknown mode ${mode}: expected one of ${Object.keys(ANSWERS).join(', ')}, noOdds`);
  }
  return (req, res) => {
    res.setHeader('access-control-allow-origin', '*');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { 'access-control-allow-methods': 'GET, POST', 'access-control-allow-headers': 'content-type' });
      res.end();
      return;
    }
    if (req.method === 'GET' && req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'ok', version: 'mock' }));
      return;
    }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let a = answer;
      if (mode === 'noOdds') {
        let body = null;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch (_) {
          /* answered as a body without odds */
        }
        a = withoutOdds(body);
      }
      if (a.json) {
        res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers });
        res.end(JSON.stringify(a.json));
        return;
      }
      res.writeHead(a.status, { 'content-type': 'application/problem+json', ...a.headers });
      res.end(JSON.stringify({ type: 'about:blank', status: a.status, ...a.body }));
    });
  };
}

/** Starts the mock on 127.0.0.1 (port 0: any free port); resolves the http.Server. */
function start(mode, port = 0) {
  const h = handler(mode);
  return new Promise((resolve) => {
    const server = http.createServer(h);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

module.exports = { start };

if (require.main === module) {
  const arg = (name, dflt) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : dflt;
  };
  start(arg('--mode', 'error503'), Number(arg('--port', '0'))).then((s) => {
    console.log(JSON.stringify({ port: s.address().port }));
  });
}
