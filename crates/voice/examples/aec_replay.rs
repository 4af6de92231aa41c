//! Runs an echo canceller dump (`HERMES_AEC_DUMP=<folder>` in the app) through a fresh canceller and the hands-free
//! VAD again, and prints what hands-free would do: where speech began and barge-ins, with the canceller's state.
//!
//! `cargo run -p hermes-voice --features aec,vad --release --example aec_replay -- <file.dump> [--every-second]
//! [--no-noise-suppression] [--wav <cleaned.wav>]`
//!
//! The dump holds the canceller's input, not its settings: pass `--no-noise-suppression` for a session that ran
//! without it (the app logs `noise_suppression` when hands-free starts). The VAD runs with its default end silence
//! (600 ms), which decides where utterances end, not where speech begins or barges in.

use hermes_voice::aec::{self, AecOptions, EchoCanceller, dump};
use hermes_voice::vad::{Segmenter, SegmenterConfig, VadEvent};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: aec_replay <file.dump> [--every-second] [--no-noise-suppression] [--wav <cleaned.wav>]");
        std::process::exit(2);
    };
    let every_second = args.iter().any(|a| a == "--every-second");
    let noise_suppression = !args.iter().any(|a| a == "--no-noise-suppression");
    let wav = args.iter().position(|a| a == "--wav").and_then(|i| args.get(i + 1));
    let calls = match std::fs::read(path).map_err(|e| e.to_string()).and_then(|b| dump::read(&b)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let n = |c: dump::Call| calls.iter().filter(|(k, _)| *k == c).map(|(_, b)| b.len()).sum::<usize>();
    println!(
        "{} calls: {:.1} s of playback, {:.1} s of microphone",
        calls.len(),
        n(dump::Call::Render) as f64 / 16_000.0,
        n(dump::Call::Capture) as f64 / 16_000.0
    );
    let mut seg = Segmenter::new(SegmenterConfig { barge_in_after: aec::BARGE_IN_AFTER, ..SegmenterConfig::default() });
    let mut canceller = EchoCanceller::new(AecOptions { noise_suppression });
    let (mut at, mut next_report, mut all) = (0u64, 16_000u64, Vec::new());
    let (mut starts, mut barges) = (0, 0);
    dump::replay(&calls, &mut canceller, |clean, st| {
        let now = at;
        let line = |what: &str| {
            println!(
                "{:7.2} s  {what:<12} delay {:?} ms, ERLE {:.1} dB, far {:.0}, heard {} ms, gated {} ms",
                now as f64 / 16_000.0,
                st.delay_ms,
                st.erle_db.unwrap_or(f64::NAN),
                st.far_rms,
                st.heard_ms,
                st.gated_ms
            )
        };
        for ev in seg.push(clean) {
            match ev {
                VadEvent::SpeechStart { .. } => {
                    starts += 1;
                    line("speech began")
                }
                VadEvent::BargeIn { .. } => {
                    barges += 1;
                    line("BARGE-IN")
                }
                VadEvent::Utterance(u) => line(&format!("utterance {:.2} s", u.samples.len() as f64 / 16_000.0)),
                _ => {}
            }
        }
        at += clean.len() as u64;
        if every_second && at >= next_report {
            line("");
            next_report += 16_000;
        }
        if wav.is_some() {
            all.extend_from_slice(clean);
        }
    });
    println!("{starts} speech start(s), {barges} barge-in(s)");
    if let Some(w) = wav
        && let Err(e) = std::fs::write(w, hermes_voice::wav::encode_pcm16_mono_16k(&all))
    {
        eprintln!("{w}: {e}");
        std::process::exit(1);
    }
}
