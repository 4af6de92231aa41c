#![allow(dead_code)]
//! Shared helpers: an engine against a devserver on loopback, and waiting for events.

use std::path::Path;
use std::time::Duration;

use hermes_client::{EngineConfig, Handle, MemoryPersist, Persist, Secret};
use hermes_protocol::{Dialect, Event};

pub struct Client {
    pub handle: Handle,
    pub events: hermes_client::Events,
    pub seen: Vec<Event>,
}

pub fn config(url: &str, dialect: Dialect, token: &str, device: &str, dir: &Path) -> EngineConfig {
    let mut c = EngineConfig::new(url, dialect, Secret::new(token), device, dir);
    c.connect_timeout = Duration::from_secs(5);
    c.seed = 7;
    c
}

pub fn start(cfg: EngineConfig) -> Client {
    start_with(cfg, Box::new(MemoryPersist::default()))
}

pub fn start_with(cfg: EngineConfig, persist: Box<dyn Persist>) -> Client {
    let (handle, events) = hermes_client::spawn(cfg, persist).expect("engine starts");
    Client { handle, events, seen: Vec::new() }
}

impl Client {
    /// Wait (at most `secs`) for an event matching `pred`; every event seen is kept in `seen`.
    pub async fn wait(&mut self, secs: u64, pred: impl FnMut(&Event) -> bool) -> Event {
        self.wait_keeping(secs, true, pred).await
    }

    /// Like [`Client::wait`], but events are not kept (for floods of big events).
    pub async fn wait_forget(&mut self, secs: u64, pred: impl FnMut(&Event) -> bool) -> Event {
        self.wait_keeping(secs, false, pred).await
    }

    async fn wait_keeping(&mut self, secs: u64, keep: bool, mut pred: impl FnMut(&Event) -> bool) -> Event {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        loop {
            let ev = tokio::time::timeout_at(deadline, self.events.recv())
                .await
                .unwrap_or_else(|_| panic!("timed out; events so far: {:#?}", self.seen))
                .expect("engine stopped");
            if keep {
                self.seen.push(ev.clone());
            }
            if pred(&ev) {
                return ev;
            }
        }
    }

    /// Collect events for `ms` milliseconds.
    pub async fn drain(&mut self, ms: u64) -> Vec<Event> {
        let mut out = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_millis(ms);
        while let Ok(Some(ev)) = tokio::time::timeout_at(deadline, self.events.recv()).await {
            self.seen.push(ev.clone());
            out.push(ev);
        }
        out
    }

    pub async fn text(&self, text: &str) -> String {
        self.handle
            .command(hermes_protocol::Command::Text {
                text: text.into(),
                reply_to: None,
                id: None,
                session: None,
                retry_of: None,
            })
            .await
            .expect("accepted")
            .expect("an id")
    }

    pub async fn ready(&mut self) {
        self.wait(10, |e| matches!(e, Event::Ready { .. })).await;
    }

    pub async fn final_reply(&mut self) -> String {
        match self.wait(10, |e| matches!(e, Event::Message { final_: true, .. })).await {
            Event::Message { text, .. } => text.into_string(),
            _ => unreachable!(),
        }
    }
}

/// Reads an HTTP/1.1 request up to the end of its head (the test servers answer without looking at a body); `None`
/// when the client went away first.
pub async fn read_request_head(tcp: &mut tokio::net::TcpStream) -> Option<Vec<u8>> {
    use tokio::io::AsyncReadExt as _;
    let mut req = Vec::new();
    let mut buf = [0u8; 1024];
    while !req.windows(4).any(|w| w == b"\r\n\r\n") {
        match tcp.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => req.extend_from_slice(&buf[..n]),
        }
    }
    Some(req)
}
