//! Test helpers: a raw WebSocket client (tokio-tungstenite) and a minimal HTTP/1.1 client.
#![allow(dead_code)]

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, connect_async};

pub const T: Duration = Duration::from_secs(5);

pub struct Ws {
    pub ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

/// How a connection ended.
#[derive(Debug, PartialEq)]
pub enum End {
    /// A close frame with this code and reason.
    Closed(u16, String),
    /// The TCP connection ended without a close frame.
    Dropped,
}

impl Ws {
    pub async fn connect(url: &str) -> Ws {
        let (ws, _) = tokio::time::timeout(T, connect_async(url)).await.expect("connect timeout").expect("connect");
        Ws { ws }
    }

    pub async fn send_text(&mut self, text: &str) {
        self.ws.send(Message::Text(text.to_string().into())).await.expect("send");
    }

    pub async fn send(&mut self, v: Value) {
        self.send_text(&v.to_string()).await;
    }

    /// The next text frame as JSON (panics on timeout or close).
    pub async fn recv(&mut self) -> Value {
        loop {
            let m = tokio::time::timeout(T, self.ws.next()).await.expect("recv timeout");
            match m {
                Some(Ok(Message::Text(t))) => return serde_json::from_str(&t).expect("json"),
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                other => panic!("expected a text frame, got {other:?}"),
            }
        }
    }

    /// Frames until one satisfies `pred` (inclusive).
    pub async fn recv_until(&mut self, mut pred: impl FnMut(&Value) -> bool) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let v = self.recv().await;
            let done = pred(&v);
            out.push(v);
            if done {
                return out;
            }
        }
    }

    /// No text frame for `d`.
    pub async fn expect_silence(&mut self, d: Duration) {
        if let Ok(m) = tokio::time::timeout(d, self.ws.next()).await {
            panic!("expected silence, got {m:?}");
        }
    }

    /// Read until the connection ends; text frames on the way are returned too.
    pub async fn end(&mut self) -> (Vec<Value>, End) {
        let mut frames = Vec::new();
        loop {
            let m = tokio::time::timeout(T, self.ws.next()).await.expect("end timeout");
            match m {
                Some(Ok(Message::Text(t))) => frames.push(serde_json::from_str(&t).expect("json")),
                Some(Ok(Message::Close(Some(f)))) => {
                    return (frames, End::Closed(u16::from(f.code), f.reason.to_string()));
                }
                Some(Ok(Message::Close(None))) => {
                    return (frames, End::Closed(u16::from(CloseCode::Status), String::new()));
                }
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => return (frames, End::Dropped),
            }
        }
    }
}

pub fn hello(token: &str, device: &str) -> Value {
    json!({"t":"hello","token":token,"device":{"id":device,"name":"test-host","platform":"linux"}})
}

/// Connect to the adapter and complete the handshake; returns the client and the `ready` frame.
pub async fn adapter(server: &hermes_devserver::Running, device: &str) -> (Ws, Value) {
    let mut ws = Ws::connect(&server.adapter_url()).await;
    ws.send(hello(server.token(), device)).await;
    let ready = ws.recv().await;
    assert_eq!(ready["t"], "ready", "{ready}");
    (ws, ready)
}

pub fn t_of(v: &Value) -> &str {
    v["t"].as_str().unwrap_or("")
}

/// A plain HTTP/1.1 response.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("json body")
    }
}

/// One HTTP/1.1 request with `Connection: close`.
pub async fn http(addr: std::net::SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Resp {
    let mut s = TcpStream::connect(addr).await.expect("tcp");
    let mut req =
        format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    let mut bytes = req.into_bytes();
    bytes.extend_from_slice(body);
    // The server may answer (413) before reading the whole body: a failed write is not an error here.
    let _ = s.write_all(&bytes).await;
    let mut raw = Vec::new();
    let _ = tokio::time::timeout(T, s.read_to_end(&mut raw)).await.expect("http timeout");
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("header end");
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|c| c.parse().ok()).expect("status");
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':').map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))).collect();
    let mut body = raw[split + 4..].to_vec();
    if let Some(n) = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok())
    {
        body.truncate(n);
    }
    Resp { status, headers, body }
}

/// A multipart/form-data body with one part `field`. Returns (content type, body).
pub fn multipart(field: &str, filename: &str, mime: &str, data: &[u8]) -> (String, Vec<u8>) {
    let boundary = "hermesTESTboundary7MA4YWxk";
    let mut b = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"{filename}\"\r\nContent-Type: {mime}\r\n\r\n"
    )
    .into_bytes();
    b.extend_from_slice(data);
    b.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), b)
}

pub fn sha256_hex(b: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(b))
}
