//! HTTP/1.1 by hand over a `TcpStream`: what the connection tests need to send half a request or nothing at all, and
//! what the soak test needs to send many requests cheaply on kept-alive connections.

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A request as bytes: `method path`, a `Host`, the given headers, and `content-length` when there is a body.
pub fn request(method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("{method} {path} HTTP/1.1\r\nhost: advisor\r\n");
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        out.push_str(&format!("content-length: {}\r\n", body.len()));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// A JSON `POST`.
pub fn post_json(path: &str, body: &str) -> Vec<u8> {
    request("POST", path, &[("content-type", "application/json")], body.as_bytes())
}

/// One response: status, headers (names lowercase) and body.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }

    /// Asserts the status, then checks the JSON body against `openapi.yaml` ([`super::assert_documented`]).
    pub fn assert_documented(&self, method: &str, path: &str, status: u16) {
        assert_eq!(self.status, status, "{}", String::from_utf8_lossy(&self.body));
        super::assert_documented(
            method,
            path,
            status,
            self.header("content-type").unwrap_or(""),
            &self.json(),
        );
    }
}

/// A client connection that reads responses one after the other (keep-alive).
pub struct RawConn {
    pub stream: TcpStream,
    buf: Vec<u8>,
}

impl RawConn {
    pub async fn connect(addr: SocketAddr) -> io::Result<RawConn> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(RawConn {
            stream,
            buf: Vec::with_capacity(16 * 1024),
        })
    }

    pub async fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes).await
    }

    /// Sends `bytes` and reads the response.
    pub async fn call(&mut self, bytes: &[u8]) -> io::Result<RawResponse> {
        self.send(bytes).await?;
        self.response().await
    }

    async fn fill(&mut self) -> io::Result<()> {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            ));
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }

    /// Reads one response (`content-length` or chunked body).
    pub async fn response(&mut self) -> io::Result<RawResponse> {
        let head_end = loop {
            if let Some(i) = find(&self.buf, b"\r\n\r\n") {
                break i;
            }
            self.fill().await?;
        };
        let head = String::from_utf8_lossy(&self.buf[..head_end]).into_owned();
        self.buf.drain(..head_end + 4);
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, format!("bad status line in {head:?}")))?;
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let get = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
        let body = if get("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
            let mut body = Vec::new();
            loop {
                let line_end = loop {
                    if let Some(i) = find(&self.buf, b"\r\n") {
                        break i;
                    }
                    self.fill().await?;
                };
                let size_text = String::from_utf8_lossy(&self.buf[..line_end]).into_owned();
                let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
                    .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, format!("bad chunk size {size_text:?}")))?;
                while self.buf.len() < line_end + 2 + size + 2 {
                    self.fill().await?;
                }
                body.extend_from_slice(&self.buf[line_end + 2..line_end + 2 + size]);
                self.buf.drain(..line_end + 2 + size + 2);
                if size == 0 {
                    break body;
                }
            }
        } else {
            let length: usize = get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
            while self.buf.len() < length {
                self.fill().await?;
            }
            self.buf.drain(..length).collect()
        };
        Ok(RawResponse { status, headers, body })
    }

    /// Waits until the server closes the connection (end of stream or reset), discarding anything it sends; returns
    /// how long that took, or `None` when it was still open after `limit`.
    pub async fn closed_within(&mut self, limit: Duration) -> Option<Duration> {
        let start = Instant::now();
        let mut chunk = [0u8; 4096];
        loop {
            let left = limit.checked_sub(start.elapsed())?;
            match tokio::time::timeout(left, self.stream.read(&mut chunk)).await {
                Err(_) => return None,
                Ok(Ok(0)) | Ok(Err(_)) => return Some(start.elapsed()),
                Ok(Ok(_)) => {}
            }
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
