//! A microphone that never goes deaf: hands-free listening that outlives its device.
//!
//! [`Recorder::start`] records until its device fails; a [`LiveInput`] keeps listening. When the device goes away
//! (unplugged, the sound server restarted, no audio for the stall timeout) it reports [`InputChange::Lost`], tries
//! again every [`RETRY`] and reports [`InputChange::Resumed`] when audio flows again.
//!
//! - Following the system default (no device named): when the default input changes — a headset plugged in, the
//!   user's choice in the system settings, the default unplugged and the server falling back to another — it moves to
//!   the new default, since a cpal stream stays on the source it was opened on.
//! - A device the user named: when it is no longer connected it is lost, even if the sound server moved the stream
//!   to another input (PulseAudio and PipeWire rescue streams that way): the user chose that microphone, and the app
//!   does not listen through another one behind their back. It comes back by itself when the device does.
//!
//! Both are checked every [`CHECK`] (one round trip to the sound server on a connection kept open) while listening.
//! The samples keep going to the same [`Recorder::on_samples`] sink across devices: the listener after it sees one
//! stream with a gap.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::capture::{CaptureError, CaptureEvent, Recorder, Recording};

/// How often a lost device is tried again.
pub const RETRY: Duration = Duration::from_secs(1);
/// How often the device (the named one is there; the default is still the one recorded) is checked.
pub const CHECK: Duration = Duration::from_secs(2);

/// What a [`LiveInput`] says about its device (on its own thread; keep handlers short).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputChange {
    /// The device went away: nothing is heard until it (or, following the default, another default) is back.
    Lost(CaptureError),
    /// Listening again on `device`: after a loss (`after_loss`), or because the system default input changed.
    Resumed {
        /// The device's name.
        device: String,
        /// It follows a [`InputChange::Lost`] (false: the default moved to another device).
        after_loss: bool,
    },
}

enum Msg {
    /// The recording of that generation failed.
    Failed(u64, CaptureError),
    Stop,
}

/// Hands-free listening that survives its device. Dropping it stops it.
pub struct LiveInput {
    tx: mpsc::Sender<Msg>,
    join: Option<JoinHandle<()>>,
    device: Arc<Mutex<Option<String>>>,
}

impl std::fmt::Debug for LiveInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveInput").field("device", &self.device()).finish()
    }
}

/// What the supervisor does next, from where it stands (the pure part, unit-tested below).
#[derive(Debug, PartialEq, Eq)]
enum Next {
    /// Nothing to do: check again after [`CHECK`].
    Wait,
    /// Open the device (again).
    Reopen,
    /// The default input is another device: move to it.
    Follow,
    /// The named device is no longer connected: stop recording (whatever the server moved the stream to).
    Gone,
}

/// `recording`: a device is being recorded; `follow`: no device was named; `changed`: the system default is not
/// the device being recorded (following), or the named device is not connected (`None`: the server did not say).
fn next(recording: bool, follow: bool, changed: Option<bool>) -> Next {
    match (recording, follow, changed) {
        (false, _, _) => Next::Reopen,
        (true, true, Some(true)) => Next::Follow,
        (true, false, Some(true)) => Next::Gone,
        (true, _, _) => Next::Wait,
    }
}

impl Recorder {
    /// Start hands-free listening on `device` (as [`Recorder::start`]; `None`: the system default, followed when it
    /// changes). The first opening's error is returned; after that, device trouble goes to `on_change` and never
    /// ends the listening — only [`LiveInput::stop`] does. The recorder's [`CaptureEvent::Error`]s are turned into
    /// [`InputChange::Lost`] (its other events still go to its `on_event`).
    pub fn start_live(
        &self,
        device: Option<&str>,
        on_change: impl Fn(InputChange) + Send + 'static,
    ) -> Result<LiveInput, CaptureError> {
        let (tx, rx) = mpsc::channel::<Msg>();
        let generation = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let recorder = {
            let (tx, generation, user) = (tx.clone(), generation.clone(), self.on_event_fn());
            self.clone().on_event(move |ev| match ev {
                CaptureEvent::Error(e) => {
                    let _ = tx.send(Msg::Failed(generation.load(std::sync::atomic::Ordering::Relaxed), e));
                }
                other => {
                    if let Some(f) = &user {
                        f(other);
                    }
                }
            })
        };
        let want = device.filter(|d| !d.is_empty()).map(str::to_owned);
        let first = recorder.start(want.as_deref())?;
        let shown = Arc::new(Mutex::new(Some(first.device().to_string())));
        let device_now = shown.clone();
        let join = std::thread::Builder::new()
            .name("hermes-voice-live".into())
            .spawn(move || supervise(recorder, want, first, generation, rx, on_change, &device_now))
            .map_err(|e| CaptureError::Internal(e.to_string()))?;
        Ok(LiveInput { tx, join: Some(join), device: shown })
    }
}

fn supervise(
    recorder: Recorder,
    want: Option<String>,
    first: Recording,
    generation: Arc<std::sync::atomic::AtomicU64>,
    rx: mpsc::Receiver<Msg>,
    on_change: impl Fn(InputChange),
    device_now: &Mutex<Option<String>>,
) {
    use std::sync::atomic::Ordering::Relaxed;
    let follow = want.is_none();
    // one connection to the sound server for the checks (a new one each time would cost a handshake)
    let host = crate::devices::shared_host();
    let mut current = Some(first);
    let set_shown = |d: Option<&str>| {
        if let Ok(mut g) = device_now.lock() {
            *g = d.map(str::to_owned);
        }
    };
    let lose = |current: &mut Option<Recording>, e: CaptureError| {
        if let Some(r) = current.take() {
            r.cancel();
        }
        set_shown(None);
        on_change(InputChange::Lost(e));
    };
    let mut wait = CHECK;
    loop {
        match rx.recv_timeout(wait) {
            Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => break,
            Ok(Msg::Failed(g, e)) => {
                if g != generation.load(Relaxed) || current.is_none() {
                    continue; // a recording already replaced
                }
                lose(&mut current, e);
                wait = RETRY;
                continue;
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
        let changed = match (&current, &want) {
            (None, _) => None,
            (Some(r), None) => {
                crate::devices::default_input_id_in(&host).map(|id| !id.is_empty() && id != r.device_id())
            }
            (Some(_), Some(w)) => crate::devices::device_present_in(&host, w).map(|present| !present),
        };
        match next(current.is_some(), follow, changed) {
            Next::Wait => wait = CHECK,
            Next::Gone => {
                let name = want.clone().unwrap_or_default();
                lose(&mut current, CaptureError::DeviceNotFound(name));
                wait = RETRY;
            }
            step @ (Next::Reopen | Next::Follow) => {
                let after_loss = step == Next::Reopen;
                generation.fetch_add(1, Relaxed);
                // the old stream first: one source at a time (and a failed reopen leaves nothing half-open)
                if let Some(r) = current.take() {
                    r.cancel();
                }
                match recorder.start(want.as_deref()) {
                    Ok(r) => {
                        let device = r.device().to_string();
                        set_shown(Some(&device));
                        current = Some(r);
                        on_change(InputChange::Resumed { device, after_loss });
                        wait = CHECK;
                    }
                    Err(e) => {
                        if !after_loss {
                            // the default moved to a device that cannot be opened: that is a loss too
                            lose(&mut current, e);
                        }
                        wait = RETRY;
                    }
                }
            }
        }
    }
    if let Some(r) = current.take() {
        r.cancel();
    }
}

impl LiveInput {
    /// The device being listened to now (`None` while it is lost).
    pub fn device(&self) -> Option<String> {
        self.device.lock().ok().and_then(|g| g.clone())
    }

    /// Stop listening (the sample sink is dropped once the last recording has ended).
    pub fn stop(mut self) {
        self.stop_inner();
    }

    fn stop_inner(&mut self) {
        let _ = self.tx.send(Msg::Stop);
        if let Some(j) = self.join.take() {
            let _ = j.join();
        }
    }
}

impl Drop for LiveInput {
    fn drop(&mut self) {
        self.stop_inner();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_device_is_reopened_whatever_else_holds() {
        for follow in [false, true] {
            for moved in [None, Some(false), Some(true)] {
                assert_eq!(next(false, follow, moved), Next::Reopen);
            }
        }
    }

    #[test]
    fn a_named_device_that_is_gone_is_lost_not_followed() {
        assert_eq!(next(true, false, Some(true)), Next::Gone);
        assert_eq!(next(true, false, Some(false)), Next::Wait);
        // the server did not answer: keep listening, ask again later
        assert_eq!(next(true, false, None), Next::Wait);
    }

    #[test]
    fn the_default_is_followed_when_it_moves() {
        assert_eq!(next(true, true, Some(true)), Next::Follow);
        assert_eq!(next(true, true, Some(false)), Next::Wait);
        assert_eq!(next(true, true, None), Next::Wait);
    }
}
