//! VAD on real speech (espeak-ng): utterance count and bounds against the truth computed from the clips.

mod common;

use common::{active, espeak, read_i16, tools_or_skip};
use hermes_voice::vad::{EnergyVad, Segmenter, SegmenterConfig, SpeechDetector, Utterance, VadEvent};
use hermes_voice::wav::to_hermes_wav;

fn clip(text: &str, dir: &std::path::Path, name: &str) -> Vec<i16> {
    let (_, wav) = espeak(text, dir, name);
    read_i16(&to_hermes_wav(&wav).unwrap()).1
}

fn run(det: Box<dyn SpeechDetector>, s: &[i16]) -> Vec<Utterance> {
    let mut seg = Segmenter::with_detector(SegmenterConfig::default(), det);
    let mut ev = Vec::new();
    for c in s.chunks(480) {
        ev.extend(seg.push(c));
    }
    ev.extend(seg.finish());
    ev.into_iter()
        .filter_map(|e| match e {
            VadEvent::Utterance(u) => Some(u),
            _ => None,
        })
        .collect()
}

const TOL: i64 = 150 * 16; // ±150 ms in samples

fn check(name: &str, u: &Utterance, truth: (usize, usize)) {
    let (ds, de) = (u.speech_start as i64 - truth.0 as i64, u.speech_end as i64 - truth.1 as i64);
    eprintln!("  {name}: start {:+.0} ms, end {:+.0} ms", ds as f64 / 16.0, de as f64 / 16.0);
    assert!(ds.abs() <= TOL && de.abs() <= TOL, "{name}: bounds off by {ds} / {de} samples");
    // pre-roll: the utterance audio starts before the detected speech
    assert!(u.start + 4000 <= u.speech_start || u.start == 0);
}

type MakeDetector = fn() -> Box<dyn SpeechDetector>;

fn detectors() -> Vec<(&'static str, MakeDetector)> {
    vec![("neural", || Box::new(hermes_voice::vad::NeuralVad::new())), ("energy", || Box::new(EnergyVad::default()))]
}

#[test]
fn speech_pause_speech_gives_two_utterances() {
    if !tools_or_skip("vad_speech", &["espeak-ng"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let a = clip("Hello Hermes, what is the weather like today?", dir.path(), "a");
    let b = clip("Please remind me to call my mother tomorrow morning.", dir.path(), "b");
    let mut s = vec![0i16; 8000];
    let off_a = s.len();
    s.extend(&a);
    s.extend(vec![0i16; 32_000]); // 2 s
    let off_b = s.len();
    s.extend(&b);
    s.extend(vec![0i16; 16_000]);
    let (a0, a1) = active(&a, 300).unwrap();
    let (b0, b1) = active(&b, 300).unwrap();
    let truth = [(off_a + a0, off_a + a1), (off_b + b0, off_b + b1)];
    for (name, det) in detectors() {
        let u = run(det(), &s);
        eprintln!("{name}: {} utterances", u.len());
        assert_eq!(u.len(), 2, "{name}: {u:?}");
        check(name, &u[0], truth[0]);
        check(name, &u[1], truth[1]);
        for x in &u {
            assert_eq!(x.samples, s[x.start as usize..x.end as usize]);
        }
    }
}

#[test]
fn speech_then_silence_gives_one_utterance() {
    if !tools_or_skip("vad_speech", &["espeak-ng"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let a = clip("This is one single sentence, spoken once, followed by silence.", dir.path(), "c");
    let mut s = vec![0i16; 4000];
    s.extend(&a);
    s.extend(vec![0i16; 48_000]);
    let (a0, a1) = active(&a, 300).unwrap();
    for (name, det) in detectors() {
        let u = run(det(), &s);
        assert_eq!(u.len(), 1, "{name}: {u:?}");
        check(name, &u[0], (4000 + a0, 4000 + a1));
    }
}
