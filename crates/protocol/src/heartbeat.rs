//! Heartbeat deadlines (A-5: Ping every 30 s, dead after 90 s without any frame; G-8 the same with `ping`).
//!
//! Adapter: the heartbeat is a WebSocket Ping, so a Ping sent to confirm delivery is one too and the next can
//! wait. v3: the heartbeat is the app-level `{"type":"ping"}` the gateway expects every 30 s (G-8); WebSocket Pings
//! sent for delivery confirmation are not it, so they do not move its schedule ([`Heartbeat::app_level`]).

use std::time::{Duration, Instant};

pub const PING_INTERVAL: Duration = Duration::from_secs(30);
pub const DEAD_AFTER: Duration = Duration::from_secs(90);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeartbeatAction {
    /// Time to send a ping.
    Ping,
    /// No frame for [`DEAD_AFTER`]: the connection is half-open; drop it.
    Dead,
}

#[derive(Debug, Clone)]
pub struct Heartbeat {
    interval: Duration,
    dead_after: Duration,
    last_rx: Instant,
    next_ping: Instant,
    /// Pings on its own schedule: [`Heartbeat::handle_ping_sent`] does not postpone it (G-8).
    app_level: bool,
}

impl Heartbeat {
    pub fn new(now: Instant) -> Heartbeat {
        Heartbeat::with(now, PING_INTERVAL, DEAD_AFTER)
    }

    /// G-8: an app-level ping every 30 s whatever other pings are sent; dead after 90 s without any frame.
    pub fn app_level(now: Instant) -> Heartbeat {
        Heartbeat { app_level: true, ..Heartbeat::new(now) }
    }

    pub fn with(now: Instant, interval: Duration, dead_after: Duration) -> Heartbeat {
        Heartbeat { interval, dead_after, last_rx: now, next_ping: now + interval, app_level: false }
    }

    /// Any frame (data, ping, pong) proves the peer alive.
    pub fn handle_rx(&mut self, now: Instant) {
        self.last_rx = now;
    }

    /// A ping was sent for another reason (delivery confirmation): the next heartbeat ping can wait — unless the
    /// heartbeat is an app-level message of its own ([`Heartbeat::app_level`]).
    pub fn handle_ping_sent(&mut self, now: Instant) {
        if !self.app_level {
            self.next_ping = now + self.interval;
        }
    }

    pub fn poll_timeout(&self) -> Instant {
        self.next_ping.min(self.last_rx + self.dead_after)
    }

    pub fn handle_timeout(&mut self, now: Instant) -> Option<HeartbeatAction> {
        if now >= self.last_rx + self.dead_after {
            return Some(HeartbeatAction::Dead);
        }
        if now >= self.next_ping {
            self.next_ping = now + self.interval;
            return Some(HeartbeatAction::Ping);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a5_pings_every_30s_and_declares_dead_after_90s_of_silence() {
        let t0 = Instant::now();
        let mut hb = Heartbeat::new(t0);
        assert_eq!(hb.poll_timeout(), t0 + Duration::from_secs(30));
        assert_eq!(hb.handle_timeout(t0 + Duration::from_secs(29)), None);
        assert_eq!(hb.handle_timeout(t0 + Duration::from_secs(30)), Some(HeartbeatAction::Ping));
        assert_eq!(hb.handle_timeout(t0 + Duration::from_secs(60)), Some(HeartbeatAction::Ping));
        assert_eq!(hb.handle_timeout(t0 + Duration::from_secs(89)), None);
        assert_eq!(hb.handle_timeout(t0 + Duration::from_secs(90)), Some(HeartbeatAction::Dead));
    }

    #[test]
    fn a5_any_frame_postpones_death() {
        let t0 = Instant::now();
        let mut hb = Heartbeat::new(t0);
        hb.handle_rx(t0 + Duration::from_secs(80));
        assert_ne!(hb.handle_timeout(t0 + Duration::from_secs(100)), Some(HeartbeatAction::Dead));
        assert_eq!(hb.handle_timeout(t0 + Duration::from_secs(170)), Some(HeartbeatAction::Dead));
    }

    #[test]
    fn g8_app_level_pings_keep_their_30s_schedule_whatever_other_pings_are_sent() {
        let t0 = Instant::now();
        let mut hb = Heartbeat::app_level(t0);
        for s in [5, 10, 20, 29] {
            hb.handle_ping_sent(t0 + Duration::from_secs(s));
        }
        assert_eq!(hb.poll_timeout(), t0 + Duration::from_secs(30));
        assert_eq!(hb.handle_timeout(t0 + Duration::from_secs(30)), Some(HeartbeatAction::Ping));
        hb.handle_rx(t0 + Duration::from_secs(31));
        hb.handle_ping_sent(t0 + Duration::from_secs(45));
        assert_eq!(hb.handle_timeout(t0 + Duration::from_secs(60)), Some(HeartbeatAction::Ping));
    }

    #[test]
    fn a6_ping_sent_for_delivery_resets_the_ping_timer() {
        let t0 = Instant::now();
        let mut hb = Heartbeat::new(t0);
        hb.handle_ping_sent(t0 + Duration::from_secs(20));
        assert_eq!(hb.handle_timeout(t0 + Duration::from_secs(30)), None);
        assert_eq!(hb.poll_timeout(), t0 + Duration::from_secs(50));
    }
}
