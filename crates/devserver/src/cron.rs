//! Scheduled messages, as Hermes cron delivers them to the mobile platform: when the job fires, its output goes down
//! as an ordinary `message` frame (final, no `reply_to`: it answers nothing) to the live connections of the device it
//! is addressed to — `device.id` is the address for cron delivery. A device with no live connection at that
//! moment gets nothing: Hermes reports `device_offline` to the job ("cron delivery needs a live connection", §10), and
//! the message is not kept for later.
//!
//! Tests schedule one through [`crate::Running::schedule_to_device`]; the demo agent's `/remind` does it for the
//! device that asks.

use std::sync::Arc;
use std::time::Duration;

use hermes_protocol::adapter::{Down, DownMessage};
use tokio::sync::oneshot;

use crate::Shared;
use crate::log::Dialect;

/// What became of a scheduled message when it fired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CronOutcome {
    /// The `message` frame went to this many live connections of the device.
    Delivered { connections: usize },
    /// No live connection of the device: nothing was sent (Hermes's `device_offline`).
    DeviceOffline,
    /// The server stopped before the message was due.
    Cancelled,
}

/// A message scheduled for a device: its id (the `message` frame's) and, once it fired, what became of it.
#[derive(Debug)]
pub struct Scheduled {
    pub id: String,
    outcome: oneshot::Receiver<CronOutcome>,
}

impl Scheduled {
    /// Waits until the message fired.
    pub async fn outcome(self) -> CronOutcome {
        self.outcome.await.unwrap_or(CronOutcome::Cancelled)
    }

    /// [`Scheduled::outcome`] from a thread outside the server's runtime (a blocking test), at most `timeout`.
    pub fn wait(self, timeout: Duration) -> Option<CronOutcome> {
        let deadline = std::time::Instant::now() + timeout;
        let mut rx = self.outcome;
        loop {
            match rx.try_recv() {
                Ok(o) => return Some(o),
                Err(oneshot::error::TryRecvError::Closed) => return Some(CronOutcome::Cancelled),
                Err(oneshot::error::TryRecvError::Empty) if std::time::Instant::now() >= deadline => return None,
                Err(oneshot::error::TryRecvError::Empty) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }
}

/// After `delay`, `text` as a final `message` frame to every live adapter connection of `device`.
pub(crate) fn schedule(shared: &Arc<Shared>, device: &str, delay: Duration, text: &str) -> Scheduled {
    let id = crate::demo::new_id();
    let (tx, rx) = oneshot::channel();
    let frame = hermes_protocol::adapter::encode(&Down::Message(DownMessage {
        id: id.clone(),
        text: text.to_string(),
        chunk: None,
        edit: None,
        final_: Some(true),
        reply_to: None,
    }));
    let (sh, device, msg_id) = (shared.clone(), device.to_string(), id.clone());
    shared.rt.spawn(async move {
        let mut stop = sh.shutdown.subscribe();
        let outcome = tokio::select! {
            () = tokio::time::sleep(delay) => match sh.send_to(Dialect::Adapter, &device, &frame) {
                0 => CronOutcome::DeviceOffline,
                connections => CronOutcome::Delivered { connections },
            },
            () = crate::stopped(&mut stop) => CronOutcome::Cancelled,
        };
        tracing::info!(%device, id = %msg_id, ?outcome, "scheduled message fired");
        let _ = tx.send(outcome);
    });
    Scheduled { id, outcome: rx }
}

/// The longest `/remind` delay (an hour).
const MAX_DEMO_SECS: u64 = 3600;
/// `/remind` without a number.
const DEFAULT_DEMO_SECS: u64 = 10;

/// The demo's `/remind [seconds] [text]`: schedules the message for `device` and returns the agent's answer.
pub(crate) fn demo_remind(shared: &Arc<Shared>, device: &str, command: &str) -> String {
    let mut rest = command.trim().strip_prefix("/remind").unwrap_or("").trim();
    let mut secs = DEFAULT_DEMO_SECS;
    if let Some((first, tail)) = rest.split_once(char::is_whitespace).or(Some((rest, "")))
        && let Ok(n) = first.parse::<u64>()
    {
        secs = n.clamp(1, MAX_DEMO_SECS);
        rest = tail.trim();
    }
    let text = if rest.is_empty() { "⏰ Reminder: this is the scheduled message you asked for." } else { rest };
    schedule(shared, device, Duration::from_secs(secs), text);
    format!(
        "⏰ Scheduled: in {secs} s I will send this device a message, as a cron job does. Close the window if you \
         like — it arrives while Hermes runs."
    )
}
