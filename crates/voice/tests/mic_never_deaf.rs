//! A microphone that never goes deaf, against a private PulseAudio daemon through cpal's native
//! PulseAudio host: a tone plays into the virtual microphone all along, and every cycle must record it (an energy
//! check, not only "no error").
//!
//! - 25 push-to-talk cycles (start → 0.35 s → stop; the app's e2e `e2e_voice_mic_never_deaf` does 100 through the
//!   whole app);
//! - 20 hands-free on/off toggles ([`Recorder::start_live`]);
//! - a named device unplugged (its module unloaded) and plugged back: `Lost`, then `Resumed` by itself, audio again;
//! - the system default input changed mid-session: hands-free moves to it (a cpal stream stays on the source it was
//!   opened on), and the default unplugged falls back to the next one.
//!
//! `harness = false` for the same reason as `capture_pulse.rs` (XDG_RUNTIME_DIR set while single-threaded).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Case, Pulse, rms};
use hermes_voice::capture::{CaptureError, Recorder, RecorderConfig, default_input_id};
use hermes_voice::live::{InputChange, LiveInput};

/// A sine tone of `secs` at `amp` (of full scale) as a 16 kHz mono WAV.
fn tone(dir: &Path, name: &str, hz: f64, amp: f64, secs: u32) -> PathBuf {
    let path = dir.join(format!("{name}.wav"));
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(&path, spec).unwrap();
    for i in 0..16_000 * secs {
        let x = amp * (2.0 * std::f64::consts::PI * hz * f64::from(i) / 16_000.0).sin();
        w.write_sample((x * 32767.0) as i16).unwrap();
    }
    w.finalize().unwrap();
    path
}

/// `paplay` of a file into a sink, in the background; killed when dropped.
struct Player(Child);

impl Player {
    fn start(p: &Pulse, sink: &str, wav: &Path) -> Player {
        let child = Command::new("paplay")
            .arg(format!("--device={sink}"))
            .arg(wav)
            .env("XDG_RUNTIME_DIR", &p.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run paplay");
        Player(child)
    }
}

impl Drop for Player {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A null sink of its own (its monitor is a microphone that can be unplugged): load it, returning its module index.
fn plug(p: &Pulse, name: &str) -> String {
    let (ok, out) = p.pactl(&["load-module", "module-null-sink", &format!("sink_name={name}")]);
    assert!(ok, "load a null sink {name}");
    out.trim().to_string()
}

fn unplug(p: &Pulse, module: &str) {
    assert!(p.pactl(&["unload-module", module]).0, "unload module {module}");
}

/// The RMS of what `on_samples` got between two marks.
#[derive(Clone, Default)]
struct Energy(Arc<Mutex<(f64, usize)>>);

impl Energy {
    fn sink(&self) -> impl Fn(&[i16]) + Send + Sync + 'static {
        let e = self.0.clone();
        move |b| {
            let mut g = e.lock().unwrap();
            g.0 += b.iter().map(|&x| (f64::from(x) / 32768.0).powi(2)).sum::<f64>();
            g.1 += b.len();
        }
    }
    /// (RMS, seconds) since the last take.
    fn take(&self) -> (f64, f64) {
        let mut g = self.0.lock().unwrap();
        let r = if g.1 == 0 { 0.0 } else { (g.0 / g.1 as f64).sqrt() };
        let secs = g.1 as f64 / 16_000.0;
        *g = (0.0, 0);
        (r, secs)
    }
    /// Waits until at least `secs` of audio came in since the last take, then takes.
    fn take_after(&self, secs: f64, within: Duration, what: &str) -> f64 {
        let t0 = Instant::now();
        while self.0.lock().unwrap().1 < (secs * 16_000.0) as usize {
            assert!(t0.elapsed() < within, "{what}: {secs} s of audio did not come within {within:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
        self.take().0
    }
}

type Changes = Arc<Mutex<Vec<InputChange>>>;

fn live(device: Option<&str>, energy: &Energy) -> (LiveInput, Changes) {
    let changes: Changes = Arc::default();
    let c2 = changes.clone();
    let cfg = RecorderConfig { keep_samples: false, ..RecorderConfig::default() };
    let input = Recorder::with_config(cfg)
        .on_samples(energy.sink())
        .start_live(device, move |c| c2.lock().unwrap().push(c))
        .unwrap();
    (input, changes)
}

fn wait_change(changes: &Changes, secs: u64, what: &str, pred: impl Fn(&InputChange) -> bool) -> Duration {
    let t0 = Instant::now();
    loop {
        if changes.lock().unwrap().iter().any(&pred) {
            return t0.elapsed();
        }
        assert!(t0.elapsed() < Duration::from_secs(secs), "{what} within {secs} s: {:?}", changes.lock().unwrap());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Push-to-talk cycles here (the app's e2e does 100).
const CYCLES: u32 = 25;

/// The tone's RMS: 0.2 of full scale as a sine.
const TONE_RMS: f64 = 0.2 / std::f64::consts::SQRT_2;

fn push_to_talk_cycles(p: &mut Pulse, dir: &Path) {
    let _tone = Player::start(p, "vsink", &tone(dir, "ptt", 440.0, 0.2, 240));
    let t0 = Instant::now();
    let mut worst = f64::MAX;
    for cycle in 1..=CYCLES {
        let rec = Recorder::new().start(None).unwrap_or_else(|e| panic!("cycle {cycle}: {e}"));
        let t = Instant::now();
        while rec.duration_secs() < 0.35 {
            assert!(t.elapsed() < Duration::from_secs(5), "cycle {cycle}: deaf (no audio in 5 s)");
            std::thread::sleep(Duration::from_millis(10));
        }
        let samples = rec.stop_samples().unwrap_or_else(|e| panic!("cycle {cycle}: {e}"));
        // skip the first 50 ms (the stream's start) and measure the rest
        let r = rms(&samples[800.min(samples.len())..]);
        assert!(r > TONE_RMS * 0.5, "cycle {cycle}: recorded rms {r:.4}, the tone is {TONE_RMS:.4}");
        worst = worst.min(r);
    }
    eprintln!(
        "    {CYCLES} push-to-talk cycles in {:.1} s, each with the tone (lowest rms {worst:.4} of {TONE_RMS:.4})",
        t0.elapsed().as_secs_f64()
    );
}

fn hands_free_20_toggles(p: &mut Pulse, dir: &Path) {
    let _tone = Player::start(p, "vsink", &tone(dir, "hf", 440.0, 0.2, 120));
    for toggle in 1..=20 {
        let energy = Energy::default();
        let (input, changes) = live(None, &energy);
        let r = energy.take_after(0.3, Duration::from_secs(5), &format!("toggle {toggle}"));
        assert!(r > TONE_RMS * 0.5, "toggle {toggle}: heard rms {r:.4}");
        input.stop();
        assert!(changes.lock().unwrap().is_empty(), "toggle {toggle}: {:?}", changes.lock().unwrap());
    }
}

/// A chosen microphone unplugged and plugged back: reported lost, no audio meanwhile (the server moves the stream
/// to another input: it is not listened to), back by itself.
fn named_device_unplugged_and_back(p: &mut Pulse, dir: &Path) {
    let wav = tone(dir, "usb", 660.0, 0.2, 60);
    let module = plug(p, "usbmic");
    let player = Player::start(p, "usbmic", &wav);
    let energy = Energy::default();
    let (input, changes) = live(Some("pulseaudio:usbmic.monitor"), &energy);
    assert!(energy.take_after(0.3, Duration::from_secs(5), "before") > TONE_RMS * 0.5);
    drop(player);
    unplug(p, &module);
    let lost = wait_change(&changes, 10, "lost", |c| matches!(c, InputChange::Lost(_)));
    eprintln!("    unplugged: lost after {:.2} s ({:?})", lost.as_secs_f64(), changes.lock().unwrap()[0]);
    assert_eq!(input.device(), None);
    std::thread::sleep(Duration::from_millis(1500));
    energy.take();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(energy.take().1, 0.0, "no audio while unplugged");
    let module = plug(p, "usbmic");
    let _player = Player::start(p, "usbmic", &wav);
    let back = wait_change(&changes, 10, "resumed", |c| matches!(c, InputChange::Resumed { after_loss: true, .. }));
    eprintln!("    plugged back: listening again after {:.2} s", back.as_secs_f64());
    energy.take();
    let r = energy.take_after(0.3, Duration::from_secs(5), "after");
    assert!(r > TONE_RMS * 0.5, "heard rms {r:.4} after plugging back");
    assert!(input.device().is_some());
    input.stop();
    unplug(p, &module);
}

/// Following the default: the user picks another default input mid-session, then unplugs it.
fn default_device_changes(p: &mut Pulse, dir: &Path) {
    let before = default_input_id().expect("a default input");
    let quiet = tone(dir, "quiet", 440.0, 0.05, 60);
    let loud = tone(dir, "loud", 880.0, 0.4, 60);
    let _a = Player::start(p, "vsink", &quiet);
    let module = plug(p, "headset");
    let _b = Player::start(p, "headset", &loud);
    let energy = Energy::default();
    let (input, changes) = live(None, &energy);
    let r = energy.take_after(0.3, Duration::from_secs(5), "on the first default");
    assert!((0.02..0.05).contains(&r), "the quiet default: rms {r:.4}");
    assert!(p.pactl(&["set-default-source", "headset.monitor"]).0);
    let moved = wait_change(&changes, 8, "moved to the new default", |c| {
        matches!(c, InputChange::Resumed { after_loss: false, .. })
    });
    eprintln!("    default changed: moved after {:.2} s to {:?}", moved.as_secs_f64(), input.device());
    energy.take();
    let r = energy.take_after(0.3, Duration::from_secs(5), "on the new default");
    assert!(r > 0.2, "the loud headset: rms {r:.4}");
    // the headset unplugged (its player first: the server would move it to what is left): the server's default
    // falls back to what is left, and listening goes on there
    drop(_b);
    unplug(p, &module);
    let n = changes.lock().unwrap().len();
    let t0 = Instant::now();
    loop {
        let after: Vec<InputChange> = changes.lock().unwrap()[n..].to_vec();
        if after.iter().any(|c| matches!(c, InputChange::Resumed { .. })) {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "never back on the remaining input: {after:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("    headset unplugged: back on {:?} after {:.2} s", input.device(), t0.elapsed().as_secs_f64());
    energy.take();
    let r = energy.take_after(0.3, Duration::from_secs(5), "back on the first");
    assert!((0.02..0.05).contains(&r), "the quiet one again: rms {r:.4}");
    input.stop();
    assert!(p.pactl(&["set-default-source", before.trim_start_matches("pulseaudio:")]).0);
}

/// A named device that is not there when listening starts: a clear error, nothing left running.
fn named_device_missing_at_start(_p: &mut Pulse, _dir: &Path) {
    let err = Recorder::new().start_live(Some("pulseaudio:nothing.monitor"), |_| {}).unwrap_err();
    assert_eq!(err, CaptureError::DeviceNotFound("pulseaudio:nothing.monitor".into()));
}

fn main() {
    let cases: Vec<Case> = vec![
        ("push_to_talk_cycles", push_to_talk_cycles),
        ("hands_free_20_toggles", hands_free_20_toggles),
        ("named_device_unplugged_and_back", named_device_unplugged_and_back),
        ("default_device_changes", default_device_changes),
        ("named_device_missing_at_start", named_device_missing_at_start),
    ];
    common::run_cases("mic_never_deaf", &["pulseaudio", "pactl", "paplay", "parec"], cases);
}
