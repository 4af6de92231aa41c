//! The session's deadlines in one table (quinn-proto's shape): each timer has a name, [`Session::poll_timeout`] is
//! the earliest armed one and [`Session::handle_timeout`] runs every one that is due.

use std::time::Instant;

use super::{Io, Session, State};
use crate::dialect::Dialect;
use crate::event::{DisconnectCode, Event};
use crate::heartbeat::HeartbeatAction;
use crate::v3::{self, Envelope};

/// A named deadline of the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timer {
    /// Not connected: the next connection attempt (A-5, G-10).
    Reconnect,
    /// Adapter: `ready` must have come by then, or the attempt is dropped.
    Ready,
    /// The heartbeat: the next ping, or the silence after which the connection is dead (A-5, G-8).
    Heartbeat,
    /// A file from the agent whose parts stopped arriving.
    MediaIn,
    /// v3: the next try of an HTTP upload that failed for a passing reason (G-9, G-10).
    UploadRetry,
}

impl Timer {
    pub const ALL: [Timer; 5] = [Timer::Reconnect, Timer::Ready, Timer::Heartbeat, Timer::MediaIn, Timer::UploadRetry];
}

impl Session {
    /// When `timer` fires; `None` when it is not armed.
    pub fn timer(&self, timer: Timer) -> Option<Instant> {
        match timer {
            Timer::Reconnect => match self.state {
                State::Idle { retry_at } => retry_at,
                _ => None,
            },
            Timer::Ready => match self.state {
                State::AwaitReady { deadline } => Some(deadline),
                _ => None,
            },
            Timer::Heartbeat => self.heartbeat.as_ref().map(|hb| hb.poll_timeout()),
            Timer::MediaIn => self.media_in.poll_timeout(),
            Timer::UploadRetry => self.uploads.retry_at(),
        }
    }

    /// The earliest armed timer: call [`handle_timeout`](Self::handle_timeout) then.
    pub fn poll_timeout(&self) -> Option<Instant> {
        Timer::ALL.into_iter().filter_map(|t| self.timer(t)).min()
    }

    /// Run every timer that is due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        // a passed retry time lets the failed upload go again (at once when ready, else after the next `ready`)
        self.uploads.handle_timeout(now);
        match self.state {
            State::Idle { retry_at: Some(at) } if now >= at => {
                self.state = State::Connecting;
                self.events.push_back(Event::Connecting { attempt: self.failures + 1 });
                self.io.push_back(Io::Connect);
            }
            State::AwaitReady { deadline } if now >= deadline => {
                self.drop_connection(DisconnectCode::NoReady, "no ready from the agent in time", now, true);
                return;
            }
            _ => {}
        }
        let action = self.heartbeat.as_mut().and_then(|hb| hb.handle_timeout(now));
        match action {
            Some(HeartbeatAction::Ping) => match self.cfg.dialect {
                Dialect::Adapter => {
                    let p = self.ping_now(now);
                    self.io.push_back(p);
                }
                Dialect::V3 => self.io.push_back(Io::Send(v3::encode(&Envelope::ping()))),
            },
            Some(HeartbeatAction::Dead) => {
                self.drop_connection(
                    DisconnectCode::Dead,
                    "no frame from the agent for 90 s (connection dead)",
                    now,
                    true,
                );
            }
            None => {}
        }
        for id in self.media_in.handle_timeout(now) {
            self.events.push_back(Event::Error {
                code: "media_incomplete".into(),
                text: "a file from the agent stopped arriving and was discarded".into(),
                id: Some(id),
            });
        }
    }
}
