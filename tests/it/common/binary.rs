//! The release binary as a child process: `advisor2048 serve` on 127.0.0.1:0 with a JSON log, for what only the
//! whole program shows (resident memory, signals and the exit code, the log lines of a request).

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The binary cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_advisor2048");

/// `advisor2048 serve` running as a child process; killed when dropped.
pub struct BinaryServer {
    pub child: Child,
    pub addr: SocketAddr,
    /// Every line the server has logged so far (stderr, one JSON object per line).
    log: Arc<Mutex<Vec<String>>>,
}

impl BinaryServer {
    /// [`BIN`] serving with `args` after `serve --listen 127.0.0.1:0 --log-format json`, logging at
    /// `warn,advisor2048=info`.
    pub fn start(args: &[&str]) -> BinaryServer {
        BinaryServer::start_with(BIN, args, &[("RUST_LOG", "warn,advisor2048=info")])
    }

    /// `bin` serving with `args` (after `serve --listen 127.0.0.1:0 --log-format json`) and the environment `env`;
    /// returns once it logged the address it serves on.
    pub fn start_with(bin: &str, args: &[&str], env: &[(&str, &str)]) -> BinaryServer {
        let mut child = Command::new(bin)
            .args(["serve", "--listen", "127.0.0.1:0", "--log-format", "json"])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {bin}: {e}"));
        let stderr = child.stderr.take().expect("piped stderr");
        let mut lines = BufReader::new(stderr).lines();
        let log = Arc::new(Mutex::new(Vec::new()));
        // The start-up line carries the bound address: {"fields": {"message": "advisor2048 serving", "addr": ...}}.
        let addr = loop {
            let line = match lines.next() {
                Some(Ok(line)) => line,
                _ => {
                    let _ = child.kill();
                    panic!("{bin} exited before it served: {:#?}", log.lock().unwrap());
                }
            };
            let parsed: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
            log.lock().unwrap().push(line);
            if let Some(addr) = parsed["fields"]["addr"].as_str() {
                break addr.parse().expect("a socket address");
            }
        };
        // Keep draining the log so the server never blocks on a full pipe.
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        BinaryServer { child, addr, log }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// The log lines so far, parsed (lines that are not JSON are a failure: `--log-format json` promises JSON).
    pub fn log(&self) -> Vec<serde_json::Value> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("a log line that is not JSON ({e}): {l}")))
            .collect()
    }

    /// A number from `/proc/<pid>/status`, e.g. `VmRSS` (in kB) or `Threads`.
    pub fn status(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).expect("/proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no {field} in /proc status"))
    }

    /// Sends SIGTERM, as a container runtime does to stop the service.
    pub fn terminate(&self) {
        let pid = self.child.id().to_string();
        let status = Command::new("kill").args(["-TERM", &pid]).status().expect("run kill");
        assert!(status.success(), "kill -TERM {pid}: {status}");
    }

    /// Waits for the process to exit, for at most `limit`; `None` when it is still running.
    pub fn exited_within(&mut self, limit: Duration) -> Option<ExitStatus> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return Some(status);
            }
            if start.elapsed() > limit {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for BinaryServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
