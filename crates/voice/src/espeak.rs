//! eSpeak NG as a program (`espeak-ng`, which speech-dispatcher's default module speaks with on Linux): a sentence
//! synthesised to PCM that the app plays itself (see [`crate::player`]), so that hands-free's echo canceller has
//! the read-aloud voice as its reference before the speakers play it. A separate process, not the library: the
//! program's GPL stays on its side of the pipe, and a crash or a hang in it cannot take the app down.
//!
//! The voices are named as speech-dispatcher's espeak-ng module names them ("English (Great Britain)",
//! "English (Great Britain)+Alex": a voice, or a voice with one of eSpeak's variants), so a voice chosen through
//! speech-dispatcher is the same voice here.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::tts::{TtsError, VoiceInfo};

/// The program's name (looked up on `PATH`).
const PROGRAM: &str = "espeak-ng";
/// eSpeak's normal rate, words per minute, and the range the app asks of it.
pub const NORMAL_WPM: u32 = 175;
const MIN_WPM: u32 = 80;
const MAX_WPM: u32 = 450;
/// eSpeak's amplitude (0–200, its default 100): as loud as speech-dispatcher plays the same voice (its default
/// volume), which is what a user who had it heard — without a clipped sample in the voice tests' sentences.
const AMPLITUDE: &str = "175";
/// A sentence that takes longer than this to synthesise is abandoned (the program is killed).
const SYNTH_TIMEOUT: Duration = Duration::from_secs(20);
/// At most this much audio from one sentence (10 minutes at 22 050 Hz): what the program prints is not trusted.
const MAX_SAMPLES: usize = 22_050 * 600;

/// One synthesised sentence: mono PCM16 at `rate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pcm {
    pub samples: Vec<i16>,
    pub rate: u32,
}

/// Is the program there and working?
pub fn available() -> bool {
    Command::new(PROGRAM)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The words per minute for a rate relative to normal (1.0 = normal, 2.0 ≈ twice as fast; 0.5–2.0).
pub fn wpm(relative: f32) -> u32 {
    let r = if relative.is_finite() { relative.clamp(0.5, 2.0) } else { 1.0 };
    ((NORMAL_WPM as f32 * r).round() as u32).clamp(MIN_WPM, MAX_WPM)
}

fn run(args: &[&str]) -> Result<String, TtsError> {
    let out = Command::new(PROGRAM)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| TtsError::Unavailable(format!("{PROGRAM}: {e}")))?;
    if !out.status.success() {
        return Err(TtsError::Failed(format!("{PROGRAM} {}: {}", args.join(" "), out.status)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A language as speech-dispatcher writes eSpeak's (`en-gb` → `en-GB`).
fn language_tag(lang: &str) -> String {
    lang.split('-')
        .enumerate()
        .map(|(i, part)| if i == 1 && part.len() == 2 { part.to_uppercase() } else { part.to_lowercase() })
        .collect::<Vec<_>>()
        .join("-")
}

/// The rows of `espeak-ng --voices` (or `--voices=variant`): (language, name). eSpeak writes a name's spaces as
/// `_` there, but takes the name with spaces (as speech-dispatcher shows it) in `-v`.
fn table(text: &str) -> Vec<(String, String)> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            // Pty Language Age/Gender VoiceName File Other-languages; the name may hold spaces, the file never
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() < 5 {
                return None;
            }
            // the file is the first column after the name that holds a '/' (gmw/en-GB, !v/Alex)
            let file_at = (4..cols.len()).find(|&i| cols[i].contains('/'))?;
            Some((language_tag(cols[1]), cols[3..file_at].join(" ").replace('_', " ")))
        })
        .collect()
}

/// The voices: every language voice alone and with every variant, as speech-dispatcher lists them.
pub fn voices() -> Result<Vec<VoiceInfo>, TtsError> {
    let base = table(&run(&["--voices"])?);
    let variants = table(&run(&["--voices=variant"])?);
    Ok(combine(&base, &variants))
}

fn combine(base: &[(String, String)], variants: &[(String, String)]) -> Vec<VoiceInfo> {
    let mut out = Vec::with_capacity(base.len() * (variants.len() + 1));
    for (language, name) in base {
        out.push(VoiceInfo { id: name.clone(), name: name.clone(), language: language.clone() });
        for (_, variant) in variants {
            let n = format!("{name}+{variant}");
            out.push(VoiceInfo { id: n.clone(), name: n, language: language.clone() });
        }
    }
    out
}

/// Speak `text` into PCM with `voice` (a name from [`voices`], a language tag, or `None` for eSpeak's default) at
/// `wpm` words a minute. The text goes through the program's standard input, never its arguments, and is read as
/// plain text (no SSML, no phoneme input).
pub fn synthesize(text: &str, voice: Option<&str>, wpm: u32) -> Result<Pcm, TtsError> {
    let speed = wpm.clamp(MIN_WPM, MAX_WPM).to_string();
    let mut cmd = Command::new(PROGRAM);
    cmd.args(["--stdout", "-a", AMPLITUDE, "-s", &speed]);
    if let Some(v) = voice.filter(|v| !v.is_empty()) {
        cmd.args(["-v", v]);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| TtsError::Unavailable(format!("{PROGRAM}: {e}")))?;
    // one line of plain text: eSpeak reads its input to the end
    let line = text.replace(['\r', '\n'], " ");
    let mut stdin = child.stdin.take().expect("piped");
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(line.as_bytes());
    });
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let r = (&mut stdout).take((MAX_SAMPLES * 2 + 4096) as u64).read_to_end(&mut buf);
        r.map(|_| buf)
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = (&mut stderr).take(4096).read_to_string(&mut s);
        s
    });
    let deadline = std::time::Instant::now() + SYNTH_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) | Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(TtsError::Failed(format!("{PROGRAM} took longer than {} s", SYNTH_TIMEOUT.as_secs())));
            }
        }
    };
    let _ = writer.join();
    let wav = reader.join().map_err(|_| TtsError::Failed("reading the voice failed".into()))?;
    let wav = wav.map_err(|e| TtsError::Failed(format!("{PROGRAM}: {e}")))?;
    let errors = err_reader.join().unwrap_or_default();
    if !status.success() {
        let why = errors.trim();
        return Err(TtsError::Failed(if why.is_empty() { format!("{PROGRAM}: {status}") } else { why.to_string() }));
    }
    parse_wav(&wav)
}

/// eSpeak's `--stdout` WAV: it cannot seek back, so the sizes in the header are placeholders and the data runs to
/// the end of the stream. Mono or not, PCM16 only.
fn parse_wav(wav: &[u8]) -> Result<Pcm, TtsError> {
    let bad = |why: &str| TtsError::Failed(format!("{PROGRAM} gave no usable audio ({why})"));
    if wav.len() < 12 || &wav[..4] != b"RIFF" || &wav[8..12] != b"WAVE" {
        return Err(bad("not a WAV"));
    }
    let mut at = 12;
    let mut format: Option<(u16, u32, u16)> = None;
    while at + 8 <= wav.len() {
        let id = &wav[at..at + 4];
        let len = u32::from_le_bytes([wav[at + 4], wav[at + 5], wav[at + 6], wav[at + 7]]) as usize;
        let body = at + 8;
        if id == b"fmt " {
            let f = wav.get(body..body + 16).ok_or_else(|| bad("short format"))?;
            let tag = u16::from_le_bytes([f[0], f[1]]);
            let channels = u16::from_le_bytes([f[2], f[3]]);
            let rate = u32::from_le_bytes([f[4], f[5], f[6], f[7]]);
            let bits = u16::from_le_bytes([f[14], f[15]]);
            if tag != 1 || bits != 16 || channels == 0 || !(4_000..=192_000).contains(&rate) {
                return Err(bad("not PCM16"));
            }
            format = Some((channels, rate, bits));
        } else if id == b"data" {
            let (channels, rate, _) = format.ok_or_else(|| bad("data before format"))?;
            let end = body.saturating_add(len).min(wav.len());
            let ch = usize::from(channels);
            let samples = wav[body..end]
                .chunks_exact(2 * ch)
                .take(MAX_SAMPLES)
                .map(|frame| i16::from_le_bytes([frame[0], frame[1]]))
                .collect();
            return Ok(Pcm { samples, rate });
        }
        at = body.saturating_add(len + (len & 1));
    }
    Err(bad("no data"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(rate: u32, channels: u16, data: &[u8]) -> Vec<u8> {
        let mut w = b"RIFF\x24\xf0\xff\x7fWAVEfmt \x10\0\0\0\x01\0".to_vec();
        w.extend_from_slice(&channels.to_le_bytes());
        w.extend_from_slice(&rate.to_le_bytes());
        w.extend_from_slice(&(rate * 2 * u32::from(channels)).to_le_bytes());
        w.extend_from_slice(&(2 * channels).to_le_bytes());
        w.extend_from_slice(&16u16.to_le_bytes());
        w.extend_from_slice(b"data\x00\xf0\xff\x7f");
        w.extend_from_slice(data);
        w
    }

    #[test]
    fn the_streamed_wav_runs_to_the_end_whatever_its_header_says() {
        let data: Vec<u8> = [1i16, -2, 300, -32768].iter().flat_map(|s| s.to_le_bytes()).collect();
        let pcm = parse_wav(&header(22_050, 1, &data)).unwrap();
        assert_eq!(pcm, Pcm { samples: vec![1, -2, 300, -32768], rate: 22_050 });
        // stereo keeps the first channel; a dangling half frame is dropped
        let mut st = data.clone();
        st.push(9);
        assert_eq!(parse_wav(&header(16_000, 2, &st)).unwrap().samples, vec![1, 300]);
    }

    #[test]
    fn what_is_not_a_pcm16_wav_is_an_error() {
        for bad in [&b""[..], b"RIFF1234WAVX", &header(22_050, 1, &[])[..20]] {
            assert!(matches!(parse_wav(bad), Err(TtsError::Failed(_))), "{bad:?}");
        }
        let mut float = header(22_050, 1, &[0; 8]);
        float[20] = 3;
        assert!(parse_wav(&float).is_err());
    }

    #[test]
    fn the_voice_table_keeps_names_with_spaces() {
        let text = "Pty Language       Age/Gender VoiceName          File                 Other Languages
 2  en-gb           --/M      English_(Great_Britain) gmw/en               (en 2)
 5  ru              --/M      Russian            zle/ru
 5  variant         --/F      Alicia             !v/Alicia
";
        let t = table(text);
        assert_eq!(
            t,
            vec![
                ("en-GB".into(), "English (Great Britain)".into()),
                ("ru".into(), "Russian".into()),
                ("variant".into(), "Alicia".into())
            ]
        );
        let v = combine(&t[..2], &t[2..]);
        let names: Vec<&str> = v.iter().map(|v| v.id.as_str()).collect();
        assert_eq!(names, ["English (Great Britain)", "English (Great Britain)+Alicia", "Russian", "Russian+Alicia"]);
        assert_eq!(v[1].language, "en-GB");
        assert_eq!(language_tag("en-gb-x-rp"), "en-GB-x-rp");
    }

    #[test]
    fn rates_map_to_words_per_minute_within_range() {
        assert_eq!(wpm(1.0), NORMAL_WPM);
        assert_eq!(wpm(2.0), 350);
        assert_eq!(wpm(9.0), 350);
        assert_eq!(wpm(0.1), 88);
        assert_eq!(wpm(f32::NAN), NORMAL_WPM);
    }

    /// The program itself, where it is installed (the voice tests' machines have it).
    #[test]
    fn a_sentence_becomes_speech() {
        if !available() {
            assert!(std::env::var_os("HERMES_REQUIRE_AUDIO").is_none(), "espeak-ng is missing");
            eprintln!("skipped: no espeak-ng");
            return;
        }
        let pcm = synthesize("Hello there, this is a test.", None, NORMAL_WPM).unwrap();
        assert_eq!(pcm.rate, 22_050);
        let secs = pcm.samples.len() as f32 / pcm.rate as f32;
        assert!((1.0..4.0).contains(&secs), "{secs} s");
        assert!(pcm.samples.iter().any(|&s| s.unsigned_abs() > 3000), "speech is loud enough");
        // faster is shorter
        let fast = synthesize("Hello there, this is a test.", None, wpm(2.0)).unwrap();
        assert!(fast.samples.len() * 3 < pcm.samples.len() * 2, "{} vs {}", fast.samples.len(), pcm.samples.len());
        // a voice by speech-dispatcher's name, with a variant
        let voices = voices().unwrap();
        assert!(voices.iter().any(|v| v.id == "English (Great Britain)+Alex"), "{} voices", voices.len());
        assert!(synthesize("Hello.", Some("English (Great Britain)+Alex"), NORMAL_WPM).is_ok());
        // an unknown voice is refused, with eSpeak's reason
        let e = synthesize("Hello.", Some("no such voice"), NORMAL_WPM).unwrap_err();
        assert!(e.to_string().contains("voice"), "{e}");
        // input that looks like options or markup is read as text
        let odd = synthesize("--help <speak>-v</speak>", None, NORMAL_WPM).unwrap();
        assert!(!odd.samples.is_empty());
    }
}
