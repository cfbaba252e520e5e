'use strict';
// node wait-healthz.js URL PID TIMEOUT_S: waits until GET URL/healthz answers {"status":"ok"}; fails early when the
// process PID has exited.
const [url, pid, timeoutS] = process.argv.slice(2);
const deadline = Date.now() + Number(timeoutS || 60) * 1000;
const alive = () => {
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch (_) {
    return false;
  }
};
(async () => {
  for (;;) {
    try {
      const r = await fetch(`${url}/healthz`);
      const body = await r.json();
      if (r.ok && body.status === 'ok') {
        console.log(`server up: ${url} version ${body.version}`);
        return;
      }
    } catch (_) {
      /* not yet */
    }
    if (!alive()) {
      console.error(`the server (pid ${pid}) exited before answering ${url}/healthz`);
      process.exit(1);
    }
    if (Date.now() > deadline) {
      console.error(`no answer from ${url}/healthz within ${timeoutS} s`);
      process.exit(1);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
})();
