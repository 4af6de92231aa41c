//! hermes-desktop patch: the silence the server put into a playback stream's timeline.
//!
//! A stream plays late when the server ran out of its data (an underrun: the client's callback came late) or waited
//! for its buffer to fill again (after a flush, a cork). The echo canceller's reference, made by the data callback,
//! must hold that silence too, or the echo comes later than its reference from then on. The server's timing replies
//! tell it: between two replies the speakers advance by the server's clock, and the stream's data by its read index
//! less the sink's latency; a step in the difference is silence.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::SystemTime;

#[cfg(not(target_has_atomic = "64"))]
use portable_atomic::AtomicI64;
#[cfg(target_has_atomic = "64")]
use std::sync::atomic::AtomicI64;
use std::sync::atomic::Ordering;

use pulseaudio::protocol;

/// Replies whose median is taken: one reply comes late now and then (the server's main thread preempted between its
/// snapshot and its clock reading), which the median of three leaves out; a step of real silence shows in all that
/// follow, so in the median one reply later.
const WINDOW: usize = 3;

pub(super) struct SilenceClock {
    rate: f64,
    frame_bytes: f64,
    /// Frames of silence below which a step is the clocks' own drift, not an underrun (0.5 ms).
    step: f64,
    /// The server's clock and the frames played at the first reply while the stream ran.
    base: Option<(SystemTime, f64)>,
    recent: VecDeque<f64>,
    last_median: Option<f64>,
    total: f64,
    out: Arc<AtomicI64>,
}

impl SilenceClock {
    pub(super) fn new(spec: protocol::SampleSpec, out: Arc<AtomicI64>) -> Self {
        let frame_bytes = (spec.channels as usize * spec.format.bytes_per_sample()).max(1) as f64;
        let rate = f64::from(spec.sample_rate);
        SilenceClock {
            rate,
            frame_bytes,
            step: rate / 2000.0,
            base: None,
            recent: VecDeque::with_capacity(WINDOW),
            last_median: None,
            total: 0.0,
            out,
        }
    }

    /// A timing reply. Publishes the frames of silence the server has put in since the first one.
    ///
    /// Only steps count: the server's clock and its sink's do not run at exactly one rate (the rig's null sink plays
    /// 0.18 % faster than the clock of the replies), and the echo canceller's reference, made as the sink asks for
    /// data, is in the sink's time already. An underrun is a step of its own size between two replies.
    pub(super) fn observe(&mut self, t: &protocol::PlaybackLatency) {
        if !t.playing {
            return;
        }
        // the frames of the stream the speakers have played: read by the sink, less what the sink holds
        let played = t.read_offset as f64 / self.frame_bytes - t.sink_usec as f64 * self.rate / 1e6;
        let Some((t0, p0)) = self.base else {
            self.base = Some((t.remote_time, played));
            return;
        };
        let Ok(elapsed) = t.remote_time.duration_since(t0) else {
            return;
        };
        let behind = elapsed.as_secs_f64() * self.rate - (played - p0);
        if self.recent.len() == WINDOW {
            self.recent.pop_front();
        }
        self.recent.push_back(behind);
        if self.recent.len() < WINDOW {
            return;
        }
        let mut sorted: Vec<f64> = self.recent.iter().copied().collect();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[WINDOW / 2];
        if let Some(last) = self.last_median.replace(median) {
            if median - last > self.step {
                self.total += median - last;
                self.out.store(self.total.round() as i64, Ordering::Relaxed);
            }
        }
    }
}
