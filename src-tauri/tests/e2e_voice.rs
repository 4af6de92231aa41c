//! End-to-end for voice and the avatar through the real app (WebKitWebDriver, Xvfb, keychain, PulseAudio null sink —
//! `cargo xtask e2e` sets them up). Skipped unless `HERMES_E2E=1`.
//!
//! - `e2e_voice_avatar_contract`: the bundled page in the pane's iframe; each call changes the page; a
//!   hostile `speak` text arrives intact and runs nothing; the avatar follows the agent's frames.
//! - The agent's own avatar page (A-27: consent, a private window without IPC): `e2e_avatar.rs`.
//! - `e2e_voice_capture`: push-to-talk records espeak-ng speech played into the null sink; the devserver
//!   receives the `audio` frame (16 kHz WAV, plausible duration).
//! - `e2e_voice_global_shortcut`: the push-to-talk shortcut, pressed and released with xdotool, records and stops.
//! - `e2e_voice_hands_free`: two spoken sentences with silence between → two `audio` frames, no button.
//! - `e2e_voice_mic_never_deaf`: 100 push-to-talk cycles and 20 hands-free toggles that each hear, the
//!   tray's listening state and its "Stop listening", a microphone unplugged and back, a new default input.
//! - `e2e_voice_read_aloud`: a final reply is spoken; the avatar is `speaking` meanwhile, idle after.
//! - `bench_voice_keyup_to_frame` (HERMES_BENCH=1): key-up → `audio` frame for a 10 s clip, CPU while recording.
//! - `bench_voice_barge_in_on_speakers` (HERMES_BENCH=1): the user's speech onset → read-aloud silent at the
//!   speakers, on the rig with the canceller on; the canceller's CPU while hands-free listens to a reply read aloud.

mod wd;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wd::app::{MonitorStream, audio_ready, espeak_wav, have, type_text, until};
use wd::{Driver, Session};

const TOKEN: &str = "e2e-voice-token-0b9a7c5e3d1f2a4c6e8b0d2f4a6c8e0b";
/// Quotes, backslashes, `</script>`, newlines, U+2028/9, template syntax, markup, emoji.
const EVIL: &str = "\"); window.__xss=1; (\"\\' ` </script><script>window.__xss=2</script>\n<img src=x onerror=\"window.__xss=3\">\r\n\u{2028}\u{2029} ${window.__xss=4} 🙂 end";

fn enabled() -> bool {
    let on = std::env::var("HERMES_E2E").is_ok_and(|v| v == "1");
    if !on {
        eprintln!("skipped: set HERMES_E2E=1 (cargo xtask e2e) to run the end-to-end tests");
    }
    on
}

use wd::LoopbackAgent as Agent;

/// A data folder with one adapter profile (token in the keychain), optionally with an avatar URL override.
fn data_with_profile(url: &str, avatar_url: Option<String>) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let p = wd::profile_with_token(dir.path(), "Voice agent", url, TOKEN, hermes_store::Dialect::Adapter, avatar_url);
    (dir, p.id)
}

fn connected(s: &Session, agent: &Agent) {
    s.wait("composer", 25, "return !!document.getElementById('composer-input')");
    let t = Instant::now();
    while agent.s().ready_count() == 0 {
        assert!(t.elapsed() < Duration::from_secs(20), "the app never connected");
        std::thread::sleep(Duration::from_millis(50));
    }
    s.wait("voice hub", 10, "return !!window.__hermesVoice");
}

/// The avatar in the pane (a previous session may have left it detached: that choice is remembered).
fn ensure_embedded(s: &Session) {
    s.exec("if (window.__hermesVoice.avatarPrefs.detached) window.__hermesVoice.setDetached(false)", json!([]));
}

const FRAME: &str = "const f = document.querySelector('#avatar-pane iframe'); const w = f && f.contentWindow; \
                     const d = w && w.document; const root = d && d.getElementById('hermes-avatar');";

#[test]
fn e2e_voice_avatar_contract() {
    if !enabled() {
        return;
    }
    let agent = Agent::start(TOKEN);
    let (data, _) = data_with_profile(&agent.s().adapter_url(), None);
    let driver = Driver::start(data.path());
    let s = driver.session(env!("CARGO_BIN_EXE_hermes-desktop"), &[]);
    connected(&s, &agent);

    // The bundled page, same origin, in the pane (A-27 without avatar_url).
    ensure_embedded(&s);
    s.wait("avatar page", 15, &format!("{FRAME} return !!(root && w.hermesAvatar)"));
    let src = s.exec(
        &format!(
            "{FRAME} return [f.getAttribute('src').split('?')[0], w.location.origin === window.location.origin, \
             root.getAttribute('data-theme') === document.documentElement.dataset.theme]"
        ),
        json!([]),
    );
    // same origin, and in the app's theme (?theme=, not the system's)
    assert_eq!(src, json!(["avatar/avatar.html", true, true]));
    let scripts = s.exec(&format!("{FRAME} return d.scripts.length"), json!([]));

    // Each call changes the page (through the app's own driver: JSON-encoded arguments, A-28).
    let call = |m: &str, arg: Value| {
        s.exec("window.__hermesVoice.avatar.call(arguments[0], arguments[1])", json!([m, arg]));
    };
    call("setState", json!("thinking"));
    s.wait("thinking", 5, &format!("{FRAME} return root.dataset.state === 'thinking'"));
    call("setState", json!("speaking"));
    s.wait("speaking", 5, &format!("{FRAME} return root.dataset.state === 'speaking'"));
    call("setVolume", json!(0.8));
    s.wait("volume", 5, &format!("{FRAME} return root.style.getPropertyValue('--level') === '0.8'"));
    call("setState", json!("idle"));
    s.wait("idle", 5, &format!("{FRAME} return root.dataset.state === 'idle'"));
    call("speak", json!(EVIL));
    s.wait("bubble", 5, &format!("{FRAME} return root.classList.contains('has-bubble')"));
    let shown = s.exec(&format!("{FRAME} return d.querySelector('.bubble-text').textContent"), json!([]));
    assert_eq!(shown, json!(EVIL), "the speak text arrives intact");
    std::thread::sleep(Duration::from_millis(300));
    let ran = s.exec(
        &format!("{FRAME} return [window.__xss, w.__xss, d.scripts.length, d.querySelectorAll('img').length]"),
        json!([]),
    );
    assert_eq!(ran, json!([null, null, scripts, 0]), "nothing in the text ran or became markup");
    assert!(s.alert_text().is_none());
    s.screenshot(&wd::screens().join("voice-01-avatar-speak.png"));

    // The avatar follows the agent: thinking while it works (avatar/typing frames), idle after the reply.
    s.exec(
        &format!(
            "{FRAME} window.__states = []; new MutationObserver(() => window.__states.push(root.dataset.state))
               .observe(root, {{attributes: true, attributeFilter: ['data-state']}});"
        ),
        json!([]),
    );
    s.exec(
        "const t=document.getElementById('composer-input'); t.focus(); t.value='hello avatar';
         t.dispatchEvent(new Event('input',{bubbles:true}));",
        json!([]),
    );
    s.wait("send enabled", 5, "return !document.querySelector('.composer button.send').disabled");
    s.exec("document.querySelector('.composer button.send').click()", json!([]));
    s.wait("reply", 20, "return document.body.innerText.includes('You said: hello avatar')");
    s.wait(
        "back to idle",
        20,
        &format!("{FRAME} return root.dataset.state === 'idle' && window.__states.includes('thinking')"),
    );

    // Detach: the pane says where the avatar went; attach brings the iframe back.
    s.exec("document.querySelector('[data-testid=avatar-detach]').click()", json!([]));
    s.wait("detached", 10, "return !document.querySelector('#avatar-pane iframe')");
    std::thread::sleep(Duration::from_millis(1500));
    let _ =
        Command::new("import").args(["-window", "root"]).arg(wd::screens().join("voice-02-detached-x11.png")).status();
    s.exec("document.querySelector('[data-testid=avatar-detach]').click()", json!([]));
    s.wait("attached", 10, &format!("{FRAME} return !!(root && w.hermesAvatar)"));

    // While nobody looks (the window unfocused) the idle loops hold still, and move again with the focus; at rest
    // (the avatar's own pause) they stay still through the focus going and coming back: giving them back must not
    // start loops the avatar itself had paused (they repainted every frame of an idle window: a third of a core in
    // the bench). The same page with its rest delay set: 10 min first, then 300 ms.
    let load = |rest_ms: u32| {
        s.exec(
            "const f = document.querySelector('#avatar-pane iframe');
             f.src = 'avatar/avatar.html?theme=' + document.documentElement.dataset.theme + '&rest=' + arguments[0];",
            json!([rest_ms]),
        );
        s.wait(
            "the page again",
            10,
            &format!("{FRAME} return !!(root && w.hermesAvatar && w.location.search.endsWith('rest={rest_ms}'))"),
        );
    };
    let running = || {
        s.exec(
            &format!(
                "{FRAME} return d.getAnimations().filter((a) => a.playState === 'running').map((a) => a.animationName)"
            ),
            json!([]),
        )
    };
    let focus = |event: &str| {
        s.exec("window.dispatchEvent(new FocusEvent(arguments[0]))", json!([event]));
        std::thread::sleep(Duration::from_millis(200));
    };
    let breathing = format!(
        "{FRAME} return d.getAnimations().some((a) => a.playState === 'running' && a.animationName === 'av-breathe')"
    );
    load(600_000);
    // (the window's real focus is the window manager's: start from a known one)
    focus("focus");
    s.wait("idle, breathing", 5, &breathing);
    focus("blur");
    assert_eq!(running(), json!([]), "unfocused and idle: the loops hold still");
    focus("focus");
    s.wait("focused: breathing again", 5, &breathing);
    load(300);
    s.wait("the avatar resting", 10, &format!("{FRAME} return root.classList.contains('resting')"));
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(running(), json!([]), "resting, nothing moves");
    for (event, what) in
        [("blur", "unfocused"), ("focus", "focused again"), ("blur", "unfocused again"), ("focus", "back")]
    {
        focus(event);
        assert_eq!(running(), json!([]), "{what}: the resting avatar's loops still hold");
    }
    // awake, the loops run, and come to rest again
    call("setState", json!("thinking"));
    s.wait("awake, breathing", 5, &breathing);
    // idle again: it comes to rest after 300 ms (its idle loops would be seen running before, but not reliably in time)
    call("setState", json!("idle"));
    s.wait("resting again", 10, &format!("{FRAME} return root.classList.contains('resting')"));
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(running(), json!([]), "resting again after the focus came and went, nothing moves");
    drop(s);
}

/// The first `ms` of `text` spoken by espeak-ng (from where its sound starts), with 200 ms of silence either side:
/// a sound the speech detector takes for speech, too short for an utterance.
fn short_burst(dir: &Path, text: &str, ms: usize) -> std::path::PathBuf {
    let spoken = dir.join("burst-source.wav");
    assert!(Command::new("espeak-ng").arg("-w").arg(&spoken).arg(text).status().unwrap().success());
    let wav = hermes_voice::wav::to_hermes_wav(&std::fs::read(&spoken).unwrap()).unwrap();
    let (samples, rate) = hermes_voice::wav::decode_mono(&wav).unwrap();
    assert_eq!(rate, 16_000);
    let from = samples.iter().position(|x| x.abs() > 0.01).expect("espeak-ng said something");
    let sound = &samples[from..(from + ms * 16).min(samples.len())];
    let mut out = vec![0i16; 3_200];
    out.extend(sound.iter().map(|x| hermes_voice::wav::f32_to_i16(*x)));
    out.extend([0i16; 3_200]);
    let path = dir.join("burst.wav");
    std::fs::write(&path, hermes_voice::wav::encode_pcm16_mono_16k(&out)).unwrap();
    path
}

fn audio_frames(agent: &Agent) -> Vec<(u64, String, Option<f64>)> {
    agent
        .s()
        .log()
        .into_iter()
        .filter_map(|e| match e.item {
            hermes_devserver::LogItem::Audio { bytes, format, duration_secs, .. } => {
                Some((bytes, format, duration_secs))
            }
            _ => None,
        })
        .collect()
}

/// Turns read-aloud on (that is what connects the app to the speech engine, not the launch); false (the test is
/// skipped, or fails under HERMES_REQUIRE_AUDIO=1) when speech-dispatcher is not usable here.
fn read_aloud_on(s: &Session) -> bool {
    s.exec("document.querySelector('.voice-ctl .hf[aria-label=\"Read replies aloud\"]').click()", json!([]));
    let tts = s.wait("tts status", 30, "return window.__hermesVoice.tts");
    if tts["available"] == json!(true) {
        return true;
    }
    let msg = format!("read-aloud unavailable here: {tts}");
    assert!(std::env::var("HERMES_REQUIRE_AUDIO").map_or(true, |v| v != "1"), "{msg}");
    eprintln!("skipped: {msg}");
    false
}

/// The app on a fresh data folder with one profile for `agent`, connected.
fn app_connected_to(agent: &Agent) -> (tempfile::TempDir, Driver, Session) {
    let (data, _) = data_with_profile(&agent.s().adapter_url(), None);
    let driver = Driver::start(data.path());
    let s = driver.session(env!("CARGO_BIN_EXE_hermes-desktop"), &[]);
    connected(&s, agent);
    (data, driver, s)
}

#[test]
fn e2e_voice_capture() {
    if !enabled() || !audio_ready() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let speech = espeak_wav(tmp.path(), "Hello Hermes. This sentence was spoken into a virtual microphone.");
    let _monitor = MonitorStream::start();
    let agent = Agent::start(TOKEN);
    let (_data, _driver, s) = app_connected_to(&agent);

    s.exec("window.__hermesVoice.press()", json!([]));
    s.wait("recording", 15, "return window.__hermesVoice.phase === 'recording'");
    s.wait("mic ring", 5, "return !!document.querySelector('.voice-ctl[data-phase=recording] .live')");
    std::thread::sleep(Duration::from_millis(400));
    assert!(Command::new("paplay").args(["--device=vsink"]).arg(&speech).status().unwrap().success());
    let level = s.exec("return window.__hermesVoice.level", json!([]));
    s.screenshot(&wd::screens().join("voice-04-recording.png"));
    std::thread::sleep(Duration::from_millis(300));
    s.exec("window.__hermesVoice.release()", json!([]));
    let got = agent.wait_log(20, |l| l.iter().any(|e| matches!(e.item, hermes_devserver::LogItem::Audio { .. })));
    assert!(got.is_some(), "the devserver never received an audio frame");
    let frames = audio_frames(&agent);
    assert_eq!(frames.len(), 1, "{frames:?}");
    let (bytes, format, dur) = frames[0].clone();
    let spoken = hermes_voice::wav::duration_secs(&std::fs::read(&speech).unwrap()).expect("espeak-ng WAV");
    eprintln!("audio frame: {bytes} bytes, {format}, {dur:?} s (speech {spoken:.2} s), level during speech {level}");
    assert!(format.contains("wav"), "{format}");
    let dur = dur.expect("a WAV duration");
    assert!(dur >= spoken && dur < spoken + 4.0, "recorded {dur} s for {spoken} s of speech");
    assert_eq!(bytes, 44 + (dur * 16_000.0).round() as u64 * 2, "16 kHz mono PCM16 (A-23)");
    // The local echo: a voice note in the chat.
    s.wait("the voice note's player", 10, "return !!document.querySelector('.row.out .voice button.play')");
    // `voice_stop` sent it itself: the engine's `sent`/`delivered` may reach the page before the echo; it still ends
    // up delivered.
    s.wait("the voice note delivered", 15, "return !!document.querySelector('.row.out .state.delivered')");
    std::thread::sleep(Duration::from_secs(1));
    let player = s.exec("return !!document.querySelector('.row.out .voice button.play')", json!([]));
    assert_eq!(player, json!(true), "the sent voice note lost its player");
    // It reads as a voice message with its real length (the frame's, to the nearest second and at least one), not
    // `voice-<stamp>.wav`, and shows its waveform: the loud middle of the clip (speech) has taller bars than its
    // quiet start.
    let label = format!("Voice message · 0:{:02}", (dur.round() as u64).max(1));
    s.wait(
        "the voice note's name and length",
        10,
        &format!(
            "return [...document.querySelectorAll('.row.out .file-name')].some(e => e.textContent === {})",
            json!(label)
        ),
    );
    let bars = s.exec(
        "return [...document.querySelectorAll('.row.out .voice .bars span')].map(b => parseFloat(b.style.height))",
        json!([]),
    );
    let bars: Vec<f64> = serde_json::from_value(bars).unwrap();
    assert_eq!(bars.len(), 48, "{bars:?}");
    let (lo, hi) = bars.iter().fold((f64::MAX, 0f64), |(lo, hi), &b| (lo.min(b), hi.max(b)));
    assert!(hi > 90.0 && lo < 30.0, "speech and silence look different: {bars:?}");
    // legible on the accent-coloured bubble: the bars are not drawn in the bubble's own colour
    let colours = s.exec(
        "const b = document.querySelector('.row.out .voice .bars span'); const bubble = b.closest('.bubble');
         return [getComputedStyle(b).backgroundColor, getComputedStyle(bubble).backgroundColor]",
        json!([]),
    );
    let (bar, bubble) = (colours[0].as_str().unwrap_or(""), colours[1].as_str().unwrap_or("?"));
    assert!(!bar.is_empty() && bar != bubble, "bars {bar} on bubble {bubble}");
    s.screenshot(&wd::screens().join("voice-05-voice-note.png"));
}

/// The push-to-talk global shortcut (registered ~1 s after start-up, off the launch path): held with the key
/// pressed by xdotool (XTEST) — as a user would, the app's window need not do anything — it records, released it stops.
#[test]
fn e2e_voice_global_shortcut() {
    if !enabled() || !audio_ready() || !have("xdotool", "--version") {
        return;
    }
    let agent = Agent::start(TOKEN);
    let (data, _) = data_with_profile(&agent.s().adapter_url(), None);
    // registered 3 s after start-up, while the page calls `voice_settings` (a main-thread command) without pause:
    // a registration that held the settings lock while the main thread ran it deadlocked the app here
    let driver = Driver::start_env(data.path(), &[("HERMES_SHORTCUT_AFTER_MS", "3000")]);
    let s = driver.session(env!("CARGO_BIN_EXE_hermes-desktop"), &[]);
    connected(&s, &agent);
    s.exec(
        "window.__vs = 0; const t0 = performance.now();
         const tick = () => window.__TAURI_INTERNALS__.invoke('voice_settings', {}).then(() => {
           window.__vs++; if (performance.now() - t0 < 6000) tick(); });
         tick();",
        json!([]),
    );
    let registered = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        wd::app_log(data.path()).contains("global shortcuts registered")
    });
    assert!(registered, "the shortcut was never registered:\n{}", wd::app_log(data.path()));
    let calls = |s: &Session| s.exec("return window.__vs", json!([])).as_u64().unwrap_or(0);
    let before = calls(&s);
    std::thread::sleep(Duration::from_millis(300));
    assert!(calls(&s) > before, "the page stopped getting answers around the registration");
    let key = |dir: &str| {
        let ok = Command::new("xdotool").args([dir, "ctrl+shift+space"]).status().is_ok_and(|st| st.success());
        assert!(ok, "xdotool {dir}");
    };
    key("keydown");
    s.wait("recording from the shortcut", 10, "return window.__hermesVoice.phase === 'recording'");
    std::thread::sleep(Duration::from_millis(700));
    key("keyup");
    s.wait("the shortcut's release stops it", 10, "return window.__hermesVoice.phase !== 'recording'");
}

/// Hands-free (A-23, VAD): two sentences separated by silence → two `audio` frames, sent without any button.
#[test]
fn e2e_voice_hands_free() {
    if !enabled() || !audio_ready() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let speech = espeak_wav(tmp.path(), "Hello Hermes, what is the weather like today?");
    let _monitor = MonitorStream::start();
    let agent = Agent::start(TOKEN);
    let (_data, _driver, s) = app_connected_to(&agent);

    s.exec("document.querySelector('.voice-ctl .hf[aria-label=\"Hands-free\"]').click()", json!([]));
    s.wait("hands-free", 15, "return window.__hermesVoice.phase === 'handsfree'");
    std::thread::sleep(Duration::from_millis(800));

    // speech too short to send (a cough, a click; here the first 100 ms of an "Ah"): heard — the mic button says so —
    // then dropped, and the "hearing you" state ends with it (the listener's Discarded → `speech_end`); nothing sent
    let burst = short_burst(tmp.path(), "Ah.", 100);
    let mut player = Command::new("paplay").arg("--device=vsink").arg(&burst).spawn().unwrap();
    let seen = s.exec_async(
        "const done = arguments[0]; const seen = []; const t0 = performance.now();
         const tick = () => {
           const h = !!document.querySelector('.voice-ctl .mic.hands.hearing');
           if (seen[seen.length - 1] !== h) seen.push(h);
           if (performance.now() - t0 < 3000) setTimeout(tick, 10); else done(seen);
         };
         tick();",
        json!([]),
    );
    assert!(player.wait().unwrap().success());
    assert_eq!(seen, json!([false, true, false]), "the mic button heard the burst, then stopped showing it");
    assert!(audio_frames(&agent).is_empty(), "a burst too short is not sent");
    assert_eq!(s.exec("return window.__hermesVoice.phase", json!([])), json!("handsfree"), "still listening");

    for round in 1..=2 {
        assert!(Command::new("paplay").args(["--device=vsink"]).arg(&speech).status().unwrap().success());
        let got = agent.wait_log(20, |l| {
            l.iter().filter(|e| matches!(e.item, hermes_devserver::LogItem::Audio { .. })).count() >= round
        });
        assert!(got.is_some(), "utterance {round} was not sent");
        if round == 1 {
            s.screenshot(&wd::screens().join("voice-06-hands-free.png"));
        }
        std::thread::sleep(Duration::from_millis(1500));
    }
    let frames = audio_frames(&agent);
    assert_eq!(frames.len(), 2, "{frames:?}");
    let spoken = hermes_voice::wav::duration_secs(&std::fs::read(&speech).unwrap()).unwrap();
    for (bytes, format, dur) in &frames {
        let dur = dur.expect("WAV");
        eprintln!("hands-free utterance: {bytes} bytes {format} {dur:.2} s (speech {spoken:.2} s)");
        // pre-roll + speech + post-roll, cut after the end silence
        assert!(dur > spoken * 0.7 && dur < spoken + 1.5, "{dur} s for {spoken} s of speech");
    }
    s.exec(
        "document.querySelector('.voice-ctl .hf[aria-pressed=true][aria-label=\"Turn hands-free off\"]').click()",
        json!([]),
    );
    s.wait("off", 10, "return window.__hermesVoice.phase === 'idle'");
    drop(s);
}

/// The virtual microphone rig for the never-deaf test: tones played into sinks (each sink's monitor is a microphone), extra
/// sinks that can be unplugged (their module unloaded) and plugged back. Dropped: players killed, extra sinks
/// unloaded, the default source back to `vsink.monitor` (the next test's microphone).
#[derive(Default)]
struct MicRig {
    players: Vec<(String, std::process::Child)>,
    modules: Vec<(String, String)>,
}

impl MicRig {
    /// A sine tone at `amp` of full scale into `sink`, for two minutes.
    fn tone(&mut self, dir: &Path, sink: &str, hz: f64, amp: f64) {
        let samples: Vec<i16> = (0..16_000 * 120)
            .map(|i| (amp * 32767.0 * (2.0 * std::f64::consts::PI * hz * f64::from(i) / 16_000.0).sin()) as i16)
            .collect();
        let wav = dir.join(format!("tone-{sink}-{hz}.wav"));
        std::fs::write(&wav, hermes_voice::wav::encode_pcm16_mono_16k(&samples)).unwrap();
        let child = Command::new("paplay")
            .arg(format!("--device={sink}"))
            .arg(&wav)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("paplay");
        self.players.push((sink.to_string(), child));
    }

    fn silence(&mut self, sink: &str) {
        let (gone, kept): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.players).into_iter().partition(|(s, _)| s == sink);
        self.players = kept;
        for (_, mut c) in gone {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// A null sink named `name` whose monitor is described "Monitor of `description`".
    fn plug(&mut self, name: &str, description: &str) {
        let out = Command::new("pactl")
            .args(["load-module", "module-null-sink", &format!("sink_name={name}")])
            .arg(format!("sink_properties=device.description={description}"))
            .output()
            .expect("pactl");
        assert!(out.status.success(), "load {name}: {}", String::from_utf8_lossy(&out.stderr));
        self.modules.push((name.to_string(), String::from_utf8_lossy(&out.stdout).trim().to_string()));
    }

    /// The device goes away, as a USB microphone pulled out: its player first (the server would move it elsewhere).
    fn unplug(&mut self, name: &str) {
        self.silence(name);
        let (gone, kept): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.modules).into_iter().partition(|(n, _)| n == name);
        self.modules = kept;
        for (_, id) in gone {
            assert!(Command::new("pactl").args(["unload-module", &id]).status().unwrap().success());
        }
    }
}

impl Drop for MicRig {
    fn drop(&mut self) {
        for (_, c) in &mut self.players {
            let _ = c.kill();
            let _ = c.wait();
        }
        for (_, id) in &self.modules {
            let _ = Command::new("pactl").args(["unload-module", id]).status();
        }
        let _ = Command::new("pactl").args(["set-default-source", "vsink.monitor"]).status();
    }
}

/// The highest microphone level the page saw over `ms` (the level is the RMS of what the shell captured: the
/// energy check of each cycle).
fn max_level(s: &Session, ms: u64) -> f64 {
    let v = s.exec_async(
        "const [ms, done] = arguments; const v = window.__hermesVoice; let max = 0; const t0 = performance.now();
         const tick = () => { max = Math.max(max, v.level); if (performance.now() - t0 < ms) setTimeout(tick, 15);
           else done(max); };
         tick();",
        json!([ms]),
    );
    v.as_f64().unwrap_or(0.0)
}

/// The label of the hands-free pill (what the user reads above the mic button).
fn pill(s: &Session) -> String {
    s.exec("const e = document.querySelector('.voice-ctl .live'); return e ? e.innerText : ''", json!([]))
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// A microphone that never goes deaf, in the real app on the PulseAudio rig: 100 push-to-talk cycles and
/// 20 hands-free toggles each hear the tone that plays into the virtual microphone (the level the shell measured, and
/// 100 `audio` frames at the devserver); the tray shows listening (a menu line, a red dot on its icon) and stops it;
/// a chosen microphone unplugged mid-session is reported in the page, the tray and the avatar, and hands-free
/// listens again by itself when it is plugged back; a new system default input is followed.
#[test]
fn e2e_voice_mic_never_deaf() {
    if !enabled() || !audio_ready() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let _monitor = MonitorStream::start();
    let mut rig = MicRig::default();
    let agent = Agent::start(TOKEN);
    let (_data, driver, s) = app_connected_to(&agent);
    rig.tone(tmp.path(), "vsink", 440.0, 0.2);

    // 1. push-to-talk, 100 times: each records the tone and sends it
    let t0 = Instant::now();
    for cycle in 1..=100 {
        let r = s.exec_async(
            "const done = arguments[0]; const v = window.__hermesVoice;
             (async () => {
               await v.press();
               if (v.phase !== 'recording') return done({ err: v.phase + ' ' + JSON.stringify(v.error) });
               let max = 0; const t0 = performance.now();
               while (performance.now() - t0 < 400) { max = Math.max(max, v.level);
                 await new Promise((r) => setTimeout(r, 15)); }
               await v.release();
               done({ max, phase: v.phase, error: v.error });
             })().catch((e) => done({ err: String(e) }));",
            json!([]),
        );
        assert!(r["err"].is_null() && r["error"].is_null(), "cycle {cycle}: {r}");
        let max = r["max"].as_f64().unwrap_or(0.0);
        assert!(max > 0.5, "cycle {cycle}: deaf — the level stayed at {max} with the tone playing");
        let got = agent.wait_log(10, |l| {
            l.iter().filter(|e| matches!(e.item, hermes_devserver::LogItem::Audio { .. })).count() >= cycle
        });
        assert!(got.is_some(), "cycle {cycle}: no audio frame");
    }
    eprintln!("100 push-to-talk cycles in {:.1} s, each heard", t0.elapsed().as_secs_f64());
    for (bytes, _, dur) in audio_frames(&agent) {
        let dur = dur.expect("a WAV");
        assert!(dur >= 0.3 && bytes > 9_000, "a short clip: {dur} s, {bytes} bytes");
    }

    // 2. hands-free on and off, 20 times: each hears
    for toggle in 1..=20 {
        set_hands_free(&s, true);
        assert_eq!(s.exec("return window.__hermesVoice.phase", json!([])), json!("handsfree"), "toggle {toggle}");
        let max = max_level(&s, 600);
        assert!(max > 0.5, "toggle {toggle}: deaf — level {max}");
        if toggle == 1 {
            // the tray says the microphone is open, with a red dot on its icon, and the avatar listens
            let pid = wd::desk::app_pid(driver.pid());
            let (tray, _) =
                wd::tray::tray_menu_when(pid, 15, "the tray says listening", |m| m.contains("Listening (hands-free)"));
            let icon = tray_icon_pixels(&tray);
            assert!(icon.1 > 0, "a red dot on the tray icon while listening ({} px of {})", icon.1, icon.0);
            assert_eq!(s.exec("return window.__hermesVoice.shown", json!([])), json!("listening"));
        }
        set_hands_free(&s, false);
    }
    let pid = wd::desk::app_pid(driver.pid());
    let (tray, _) = wd::tray::tray_menu_when(pid, 10, "the tray no longer listening", |m| !m.contains("Listening"));
    assert_eq!(tray_icon_pixels(&tray).1, 0, "no red dot once the microphone is closed");

    // 3. the tray's "Stop listening" ends hands-free, and the page knows
    set_hands_free(&s, true);
    let (tray, menu) = wd::tray::tray_menu_when(pid, 10, "listening again", |m| m.contains("Stop listening"));
    wd::tray::tray_click(&tray, &menu, "Stop listening");
    s.wait("hands-free ended from the tray", 10, "return window.__hermesVoice.phase === 'idle'");
    wd::tray::tray_menu_when(pid, 10, "the tray after stop", |m| !m.contains("Listening"));
    rig.silence("vsink");

    // 4. a chosen microphone unplugged mid-session and plugged back
    rig.plug("usbmic", "USB-Mic");
    rig.tone(tmp.path(), "usbmic", 660.0, 0.2);
    let set_device = |d: Value| {
        s.exec_async(
            "const [d, done] = arguments; const v = window.__hermesVoice;
             v.saveSettings({ ...v.settings, device: d }).then(() => done(0))",
            json!([d]),
        );
    };
    set_device(json!("Monitor of USB-Mic"));
    set_hands_free(&s, true);
    assert!(max_level(&s, 600) > 0.5, "hands-free hears the USB microphone");
    rig.unplug("usbmic");
    let t = Instant::now();
    s.wait("the page says the microphone is gone", 10, "return !!document.querySelector('[data-testid=mic-lost]')");
    eprintln!("unplugged: shown after {:.2} s", t.elapsed().as_secs_f64());
    assert!(pill(&s).contains("listens again as soon as it is back"), "{}", pill(&s));
    assert_eq!(s.exec("return window.__hermesVoice.phase", json!([])), json!("handsfree"));
    assert_eq!(s.exec("return window.__hermesVoice.shown", json!([])), json!("error"), "the avatar shows it");
    // …and its pane's state chip says so on one line ("Something's wrong" had wrapped onto two in the 300 px pane)
    let chip = s.exec(
        "const c = document.querySelector('.pane header .chip'); \
         return [c.textContent, c.offsetHeight, parseFloat(getComputedStyle(c).fontSize)]",
        json!([]),
    );
    let (text, height, font) = (chip[0].as_str().unwrap_or(""), chip[1].as_f64().unwrap(), chip[2].as_f64().unwrap());
    assert!(!text.is_empty() && height < 2.0 * font + 4.0, "the chip {text:?} is {height} px high at {font} px");
    wd::tray::tray_menu_when(pid, 10, "the tray says so", |m| m.contains("Microphone disconnected"));
    s.screenshot(&wd::screens().join("voice-09-mic-unplugged.png"));
    std::thread::sleep(Duration::from_secs(2));
    rig.plug("usbmic", "USB-Mic");
    rig.tone(tmp.path(), "usbmic", 660.0, 0.2);
    let t = Instant::now();
    s.wait("listening again by itself", 10, "return !document.querySelector('[data-testid=mic-lost]')");
    eprintln!("plugged back: listening after {:.2} s", t.elapsed().as_secs_f64());
    assert!(pill(&s).contains("Listening again on Monitor of USB-Mic"), "{}", pill(&s));
    s.screenshot(&wd::screens().join("voice-10-mic-back.png"));
    assert!(max_level(&s, 600) > 0.5, "hears the microphone plugged back");
    set_hands_free(&s, false);
    rig.unplug("usbmic");
    set_device(Value::Null);

    // 5. the system default input changes mid-session (a headset plugged in, chosen in the system's settings):
    // hands-free follows it, from the silent microphone to the headset's
    rig.plug("headset", "Headset");
    rig.tone(tmp.path(), "headset", 880.0, 0.4);
    set_hands_free(&s, true);
    let quiet = max_level(&s, 600);
    assert!(quiet < 0.2, "the silent default first: {quiet}; {}", pulse_state());
    assert!(Command::new("pactl").args(["set-default-source", "headset.monitor"]).status().unwrap().success());
    s.wait(
        "moved to the new default",
        10,
        "return (document.querySelector('.voice-ctl .live')?.innerText ?? '').includes('Monitor of Headset')",
    );
    let loud = max_level(&s, 600);
    assert!(loud > 0.9, "the headset is heard: {loud}");
    set_hands_free(&s, false);
    drop(rig);
    drop(s);
}

/// The sound server's defaults and streams, for a failure's message.
fn pulse_state() -> String {
    let out = |args: &[&str]| {
        Command::new("pactl")
            .args(args)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
            .unwrap_or_default()
    };
    let info = out(&["info"]);
    let defaults: Vec<&str> = info.lines().filter(|l| l.starts_with("Default")).collect();
    format!(
        "{defaults:?}\nsink inputs:\n{}\nsource outputs:\n{}",
        out(&["list", "short", "sink-inputs"]),
        out(&["list", "short", "source-outputs"])
    )
}

/// The tray icon as the tray host draws it (libappindicator's `IconName`: a PNG it wrote): its pixel count and how
/// many of them are the listening dot's red.
fn tray_icon_pixels(tray: &wd::tray::Tray) -> (usize, usize) {
    let name = wd::tray::sni_property(tray, "IconName");
    let path = name.split('\'').nth(1).unwrap_or_default().to_string();
    let theme = wd::tray::sni_property(tray, "IconThemePath");
    let dir = theme.split('\'').nth(1).unwrap_or_default().to_string();
    let file = [std::path::PathBuf::from(&path), Path::new(&dir).join(format!("{path}.png"))]
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("the tray icon's file: IconName {name} IconThemePath {theme}"));
    let img = image::open(&file).expect("the tray icon's PNG").to_rgba8();
    let red = img.pixels().filter(|p| p.0 == [0xe5, 0x3e, 0x3e, 0xff]).count();
    (img.pixels().len(), red)
}

/// Counts barge-ins in `window.__barge`, the last one's `performance.now()` in `window.__bargeAt` (the hub's own
/// handler still runs).
fn count_barge_ins(s: &Session) {
    s.exec(
        "const v = window.__hermesVoice; window.__barge = 0;
         const b = v.bargeIn.bind(v);
         v.bargeIn = () => { window.__barge++; window.__bargeAt = performance.now(); b(); };",
        json!([]),
    );
}

/// Echo cancellation on or off (the settings, saved as the page saves them).
fn set_echo_cancellation(s: &Session, on: bool) {
    s.exec_async(
        "const [on, done] = arguments; const v = window.__hermesVoice;
         v.saveSettings({ ...v.settings, echoCancellation: on }).then(() => done(true), (e) => done(String(e)));",
        json!([on]),
    );
}

/// Types `text` in the composer and sends it.
fn say(s: &Session, text: &str) {
    type_text(s, text);
    s.wait("send enabled", 5, "return !document.querySelector('.composer button.send').disabled");
    s.exec("document.querySelector('.composer button.send').click()", json!([]));
}

/// Hands-free on or off through the hub, as the button does.
fn set_hands_free(s: &Session, on: bool) {
    s.exec_async(
        "const [on, done] = arguments; window.__hermesVoice.setHandsFree(on).then(() => done(0))",
        json!([on]),
    );
}

/// The speakers heard by the microphone, as on a laptop without a headset: a PulseAudio loopback from the default
/// output's monitor (where read-aloud plays) into the virtual microphone's sink, at full level and 30 ms late. Unloaded
/// when dropped.
struct SpeakerEcho(Option<String>);

impl SpeakerEcho {
    fn start() -> SpeakerEcho {
        let out = Command::new("pactl")
            // adjust_time=0: a fixed delay, as a room's is (the module otherwise resamples to chase its latency
            // target, a drifting echo path no room has)
            .args([
                "load-module",
                "module-loopback",
                "source=vspeaker.monitor",
                "sink=vsink",
                "latency_msec=30",
                "adjust_time=0",
            ])
            .output()
            .expect("pactl");
        assert!(out.status.success(), "module-loopback: {}", String::from_utf8_lossy(&out.stderr));
        SpeakerEcho(Some(String::from_utf8_lossy(&out.stdout).trim().to_string()))
    }
}

impl Drop for SpeakerEcho {
    fn drop(&mut self) {
        if let Some(id) = self.0.take() {
            let _ = Command::new("pactl").args(["unload-module", &id]).status();
        }
    }
}

/// Waits for hands-free to start with the echo canceller; if it does not, says why from the app's log.
fn canceller_started(data: &Path) {
    let t = Instant::now();
    while !wd::app_log(data).contains("hands-free with echo cancellation") {
        if t.elapsed() > Duration::from_secs(20) {
            let log = wd::app_log(data);
            let voice: Vec<&str> = log
                .lines()
                .filter(|l| ["hands-free", "monitor", "canceller", "read-aloud", "voice"].iter().any(|k| l.contains(k)))
                .collect();
            panic!("hands-free did not start with the echo canceller:\n{}", voice.join("\n"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Hands-free on speakers (echo cancellation): 20 read-aloud sentences come back through the microphone at full level
/// and start nothing — no utterance sent, no barge-in; then the user talks over a reply being read: it stops
/// (barge-in) and what they said is sent. Last, the control: the same rig without the canceller does trigger.
#[test]
fn e2e_voice_hands_free_on_speakers_hears_only_the_user() {
    if !enabled() || !audio_ready() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let speech = espeak_wav(tmp.path(), "Stop please, I want to ask you something else.");
    let _monitor = MonitorStream::start();
    let _echo = SpeakerEcho::start();
    let agent = Agent::start(TOKEN);
    let (data, _driver, s) = app_connected_to(&agent);
    if !read_aloud_on(&s) {
        return;
    }
    count_barge_ins(&s);
    let hands_free = |on: bool| {
        let label = if on { "Hands-free" } else { "Turn hands-free off" };
        s.exec(&format!("document.querySelector('.voice-ctl .hf[aria-label=\"{label}\"]').click()"), json!([]));
        let phase = if on { "handsfree" } else { "idle" };
        s.wait("hands-free on/off", 15, &format!("return window.__hermesVoice.phase === '{phase}'"));
    };
    let echo_cancellation = |on: bool| set_echo_cancellation(&s, on);
    let say = |text: &str| say(&s, text);

    hands_free(true);
    canceller_started(data.path());
    std::thread::sleep(Duration::from_millis(800));

    // 20 sentences, read aloud (the devserver answers "You said: …" with them)
    let sentences = [
        "Here is the summary of your day.",
        "You have three meetings this afternoon.",
        "The first one starts at two with the design team.",
        "After that, a call with the supplier.",
        "The weather will be cloudy with some rain.",
        "Remember to take an umbrella.",
        "Your package was delivered to the front desk.",
        "The report is attached to this message.",
        "I converted it to PDF as you wanted.",
        "There were two errors in the second table.",
        "I fixed the totals and marked the changes.",
        "Your flight on Friday is on time.",
        "Check in opens a day before departure.",
        "I added the hotel to your calendar.",
        "The restaurant confirmed your table for eight.",
        "Do you want me to send the invitations now?",
        "I can also remind everyone the day before.",
        "The build finished without warnings.",
        "All the tests passed on the first try.",
        "That is everything for today, have a good evening.",
    ];
    say(&sentences.join(" "));
    s.wait("reading aloud", 30, "return window.__hermesVoice.ttsSpeaking");
    let t = Instant::now();
    s.wait("all 20 sentences read", 240, "return !window.__hermesVoice.ttsSpeaking");
    let read = t.elapsed();
    std::thread::sleep(Duration::from_millis(1500)); // an utterance would end and be sent in this time
    let barge = s.exec("return window.__barge", json!([]));
    let sent = audio_frames(&agent);
    eprintln!(
        "20 sentences read aloud in {:.1} s through the speakers' echo: {} utterance(s) sent, {barge} barge-in(s)",
        read.as_secs_f64(),
        sent.len()
    );
    let log = wd::app_log(data.path());
    let voice_log: Vec<&str> =
        log.lines().filter(|l| l.contains("hands-free") || l.contains("recording") || l.contains("monitor")).collect();
    // what the canceller was doing whenever speech began over the playback (none: nothing got through its gate)
    for l in log.lines().filter(|l| l.contains("while the canceller runs")) {
        eprintln!("  {l}");
    }
    assert!(
        read > Duration::from_secs(15),
        "read-aloud stopped early ({read:?}): it barged in on itself\n{voice_log:#?}"
    );
    assert_eq!(barge, json!(0), "barge-in on the app's own voice");
    assert!(sent.is_empty(), "the app's own voice was sent as the user's: {sent:?}\n{voice_log:#?}");
    assert!(log.contains("hands-free with echo cancellation"), "the canceller was not on");

    // The user talks over the next reply: it stops, and what they said goes to the agent.
    say(&sentences[..8].join(" "));
    s.wait("reading aloud again", 30, "return window.__hermesVoice.ttsSpeaking");
    std::thread::sleep(Duration::from_millis(2000));
    assert!(Command::new("paplay").args(["--device=vsink"]).arg(&speech).status().unwrap().success());
    s.wait("barge-in stopped read-aloud", 5, "return window.__barge >= 1 && !window.__hermesVoice.ttsSpeaking");
    // the log says what the canceller was doing at the barge-in (how a barge-in on the app's own voice is read)
    let barge_line = || {
        wd::app_log(data.path())
            .lines()
            .find(|l| l.contains("hands-free: barge-in while the canceller runs"))
            .map(String::from)
    };
    until("the barge-in logged with the canceller's state", || barge_line().is_some());
    let line = barge_line().unwrap_or_default();
    eprintln!("  {line}");
    assert!(
        ["delay_ms=", "erle_db=", "far_rms=", "gated_ms=", "unreferenced_ms="].iter().all(|k| line.contains(k)),
        "{line}"
    );
    let got = agent.wait_log(20, |l| l.iter().any(|e| matches!(e.item, hermes_devserver::LogItem::Audio { .. })));
    assert!(got.is_some(), "what the user said over read-aloud was not sent");
    let frames = audio_frames(&agent);
    let spoken = hermes_voice::wav::duration_secs(&std::fs::read(&speech).unwrap()).unwrap();
    let dur = frames[0].2.expect("WAV");
    eprintln!("the user's utterance over read-aloud: {dur:.2} s (speech {spoken:.2} s)");
    assert!(dur > spoken * 0.6, "{dur} s for {spoken} s of speech");
    // The control, last (what a first phase leaves in flight cannot count against the canceller): without it, the
    // rig's echo makes read-aloud interrupt itself or be sent as the user.
    hands_free(false);
    std::thread::sleep(Duration::from_millis(1500));
    let base = audio_frames(&agent).len();
    s.exec("window.__barge = 0", json!([]));
    echo_cancellation(false);
    hands_free(true);
    std::thread::sleep(Duration::from_millis(800));
    say("One sentence to hear. Another sentence to hear. A third one to be sure.");
    s.wait("reading aloud", 30, "return window.__hermesVoice.ttsSpeaking");
    s.wait("read-aloud over", 60, "return !window.__hermesVoice.ttsSpeaking");
    std::thread::sleep(Duration::from_millis(1500));
    let control = (s.exec("return window.__barge", json!([])), audio_frames(&agent).len() - base);
    eprintln!("without echo cancellation: {} barge-in(s), {} utterance(s) sent", control.0, control.1);
    assert!(control.0 != json!(0) || control.1 > 0, "the rig's echo must trigger hands-free without the canceller");
    hands_free(false);
    drop(s);
}

/// Read-aloud: with it on, a final reply is spoken by the system TTS and the avatar is `speaking` meanwhile,
/// idle after. Skipped when speech-dispatcher is not usable here (fails under HERMES_REQUIRE_AUDIO=1).
#[test]
fn e2e_voice_read_aloud() {
    if !enabled() || !audio_ready() {
        return;
    }
    let agent = Agent::start(TOKEN);
    let (data, _) = data_with_profile(&agent.s().adapter_url(), None);
    let driver = Driver::start(data.path());
    let s = driver.session(env!("CARGO_BIN_EXE_hermes-desktop"), &[]);
    connected(&s, &agent);
    if !read_aloud_on(&s) {
        return;
    }
    ensure_embedded(&s);
    s.wait("avatar page", 15, &format!("{FRAME} return !!(root && w.hermesAvatar)"));
    s.exec(
        &format!(
            "{FRAME} window.__states = []; new MutationObserver(() => window.__states.push(root.dataset.state))
               .observe(root, {{attributes: true, attributeFilter: ['data-state']}});"
        ),
        json!([]),
    );
    s.exec(
        "const t=document.getElementById('composer-input'); t.focus(); t.value='read this aloud please';
         t.dispatchEvent(new Event('input',{bubbles:true}));",
        json!([]),
    );
    s.wait("send enabled", 5, "return !document.querySelector('.composer button.send').disabled");
    s.exec("document.querySelector('.composer button.send').click()", json!([]));
    s.wait("speaking", 30, "return window.__hermesVoice.ttsSpeaking");
    s.screenshot(&wd::screens().join("voice-07-read-aloud.png"));
    s.wait("speech ended", 60, "return !window.__hermesVoice.ttsSpeaking");
    s.wait(
        "idle after",
        10,
        &format!("{FRAME} return root.dataset.state === 'idle' && window.__states.includes('speaking')"),
    );
    drop(s);
}

/// Bench (HERMES_BENCH=1 under `cargo xtask e2e bench_voice`): key-up → `audio` frame logged by the devserver for a
/// 10 s clip, through the app's real path (UI → voice_stop → WAV → send_command → engine → WebSocket), and the app
/// process's CPU while recording (the WebKit processes are separate and not counted).
#[test]
fn bench_voice_keyup_to_frame() {
    const ROUNDS: usize = 5;
    if std::env::var("HERMES_BENCH").map_or(true, |v| v != "1") || !enabled() || !audio_ready() {
        eprintln!("skipped: HERMES_BENCH=1 HERMES_E2E=1 run it");
        return;
    }
    let _monitor = MonitorStream::start();
    let agent = Agent::start(TOKEN);
    let (data, driver, s) = app_connected_to(&agent);
    let pid = wd::desk::app_pid(driver.pid());
    let hz = 100.0; // USER_HZ
    // Where the time went (thread names are cut at 15 characters by the kernel).
    let per_thread = |th0: &std::collections::HashMap<u32, (String, u64)>, wall: f64| {
        let mut per: Vec<(String, f64)> = wd::procfs::thread_ticks(pid)
            .into_iter()
            .map(|(tid, (name, t))| (name, (t - th0.get(&tid).map_or(0, |x| x.1)) as f64 / hz / wall * 100.0))
            .filter(|(_, p)| *p > 0.0)
            .collect();
        per.sort_by(|a, b| b.1.total_cmp(&a.1));
        per.iter().take(6).map(|(n, p)| format!("{n} {p:.1} %")).collect::<Vec<_>>().join(", ")
    };
    // Baseline: the connected app doing nothing for 10 s, once the start-up work is over and the avatar has come to
    // rest (its idle loops pause after 30 s with nothing happening: avatar.js).
    std::thread::sleep(Duration::from_secs(8));
    s.wait("the avatar resting", 60, &format!("{FRAME} return !!root && root.classList.contains('resting')"));
    // what still moves at rest (each running animation repaints every frame)
    let running = s.exec(
        &format!(
            "{FRAME} const list = (doc) => doc.getAnimations().filter(a => a.playState === 'running') \
             .map(a => (a.animationName || a.transitionProperty || 'script') + ' on ' + \
             (a.effect && a.effect.target ? (a.effect.target.getAttribute('class') || a.effect.target.tagName) : '?')); \
             return {{ page: list(document), avatar: d ? list(d) : [] }};"
        ),
        json!([]),
    );
    eprintln!("running animations at rest: {running}");
    // (the WebKit processes, children of the app, are printed beside: they are not in the figure)
    let web = |pid: u32| wd::descendants(pid).into_iter().map(wd::procfs::ticks).sum::<u64>();
    let (t0, c0, th0, w0) = (Instant::now(), wd::procfs::ticks(pid), wd::procfs::thread_ticks(pid), web(pid));
    std::thread::sleep(Duration::from_secs(10));
    let wall = t0.elapsed().as_secs_f64();
    let idle = (wd::procfs::ticks(pid) - c0) as f64 / 100.0 / wall * 100.0;
    let web_idle = (web(pid) - w0) as f64 / 100.0 / wall * 100.0;
    eprintln!("app CPU idle (connected, no recording): {idle:.2} % (WebKit processes {web_idle:.1} %)");
    eprintln!("  threads: {}", per_thread(&th0, t0.elapsed().as_secs_f64()));
    let mut lat = Vec::new();
    let mut cpu = Vec::new();
    for round in 0..ROUNDS {
        std::thread::sleep(Duration::from_secs(1));
        s.exec("window.__hermesVoice.press()", json!([]));
        s.wait("recording", 15, "return window.__hermesVoice.phase === 'recording'");
        let (t0, c0, th0, w0) = (Instant::now(), wd::procfs::ticks(pid), wd::procfs::thread_ticks(pid), web(pid));
        std::thread::sleep(Duration::from_secs(10));
        let (busy, wall) = ((wd::procfs::ticks(pid) - c0) as f64 / hz, t0.elapsed().as_secs_f64());
        cpu.push(busy / wall * 100.0);
        eprintln!(
            "  threads: {}; WebKit processes {:.1} %",
            per_thread(&th0, wall),
            (web(pid) - w0) as f64 / hz / wall * 100.0
        );
        let before = audio_frames(&agent).len();
        let t = Instant::now();
        // key-up: the same call the button's pointerup and the shortcut's release make, stamped (epoch ms) in the
        // page as it runs, so WebDriver's own round trip is not in the figure
        s.exec(
            "window.__hermesKeyUp = performance.timeOrigin + performance.now(); window.__hermesVoice.release()",
            json!([]),
        );
        let got = agent.wait_log(20, |l| {
            l.iter().filter(|e| matches!(e.item, hermes_devserver::LogItem::Audio { .. })).count() > before
        });
        let (seen, via_webdriver) = (wd::epoch_ms(), t.elapsed().as_secs_f64() * 1000.0);
        assert!(got.is_some());
        let key_up = s.exec("return window.__hermesKeyUp", json!([])).as_f64().expect("the page's key-up stamp");
        lat.push(seen - key_up);
        eprintln!(
            "round {round}: key-up → audio frame {:.1} ms ({via_webdriver:.1} ms from the WebDriver call); app CPU while recording {:.2} %",
            lat[round], cpu[round]
        );
    }
    lat.sort_by(f64::total_cmp);
    cpu.sort_by(f64::total_cmp);
    eprintln!(
        "BENCH voice (10 s clip, {ROUNDS} rounds): key-up → audio frame median {:.1} ms (max {:.1}); app CPU while recording median {:.2} % of a core (idle {idle:.2} %)",
        lat[ROUNDS / 2],
        lat[ROUNDS - 1],
        cpu[ROUNDS / 2]
    );
    let log = std::fs::read_dir(data.path().join("logs"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect::<String>();
    for l in log.lines().filter(|l| l.contains("voice clip ready")) {
        eprintln!("app: {l}");
    }
    drop(s);
    drop(driver);
    // The next test's launch must not meet this instance (single-instance would hand over and its session hang).
    let t = Instant::now();
    while Path::new(&format!("/proc/{pid}")).exists() && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(100));
    }
    if Path::new(&format!("/proc/{pid}")).exists() {
        eprintln!("the app (pid {pid}) outlived its WebDriver session: killing it");
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        wd::wait_gone(env!("CARGO_BIN_EXE_hermes-desktop"));
    }
}

/// The level of a PulseAudio source as it happens: `parec` at 10 ms latency, 16 kHz mono, each 10 ms block's RMS
/// stamped with the test's clock when it arrives. Stopped when dropped.
struct Tap {
    child: std::process::Child,
    blocks: std::sync::Arc<std::sync::Mutex<Vec<(Instant, f64)>>>,
}

impl Tap {
    fn start(source: &str) -> Tap {
        use std::io::Read;
        let mut child = Command::new("parec")
            .args(["--latency-msec=10", "--format=s16le", "--rate=16000", "--channels=1", "--raw", "-d", source])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("parec");
        let mut out = child.stdout.take().unwrap();
        let blocks = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let b2 = blocks.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 320];
            while out.read_exact(&mut buf).is_ok() {
                let rms = (buf
                    .chunks_exact(2)
                    .map(|c| (f64::from(i16::from_le_bytes([c[0], c[1]])) / 32768.0).powi(2))
                    .sum::<f64>()
                    / 160.0)
                    .sqrt();
                b2.lock().unwrap().push((Instant::now(), rms));
            }
        });
        Tap { child, blocks }
    }

    /// The first block after `from` louder than `rms`.
    fn first_loud(&self, from: Instant, rms: f64) -> Option<Instant> {
        self.blocks.lock().unwrap().iter().find(|(t, r)| *t >= from && *r > rms).map(|(t, _)| *t)
    }

    /// The start of the first run of at least `quiet` with every block under `rms`, after `from`.
    fn silent_from(&self, from: Instant, rms: f64, quiet: Duration) -> Option<Instant> {
        let b = self.blocks.lock().unwrap();
        let mut start: Option<Instant> = None;
        for &(t, r) in b.iter().filter(|(t, _)| *t >= from) {
            if r < rms {
                let s = *start.get_or_insert(t);
                if t.duration_since(s) >= quiet {
                    return Some(s);
                }
            } else {
                start = None;
            }
        }
        None
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Bench (HERMES_BENCH=1, `cargo xtask bench voice`), #28's figures on the rig, with the optimised app:
/// - the echo canceller's cost: the app's voice threads while hands-free listens and a reply is read aloud, with the
///   canceller and without (no echo path here, so the control does not barge in);
/// - barge-in: the user's speech played into its own sink, looped into the microphone 30 ms late (a room), while the
///   speakers' echo is looped in too; from the speech's onset (at its sink) to read-aloud's silence at the speakers
///   (500 ms without sound), 5 rounds. The 30 ms of the loop count against us.
#[test]
fn bench_voice_barge_in_on_speakers() {
    const ROUNDS: usize = 5;
    if std::env::var("HERMES_BENCH").map_or(true, |v| v != "1") || !enabled() || !audio_ready() {
        eprintln!("skipped: HERMES_BENCH=1 HERMES_E2E=1 run it");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let speech = espeak_wav(tmp.path(), "Stop please, I want to ask you something else.");
    let _monitor = MonitorStream::start();
    let agent = Agent::start(TOKEN);
    let (data, driver, s) = app_connected_to(&agent);
    if !read_aloud_on(&s) {
        return;
    }
    let pid = wd::desk::app_pid(driver.pid());
    count_barge_ins(&s);
    // when the listener's speech onset reached the page (`speech` set true)
    s.exec(
        "const v = window.__hermesVoice; const proto = Object.getPrototypeOf(v);
         const d = Object.getOwnPropertyDescriptor(proto, 'speech');
         Object.defineProperty(v, 'speech', { configurable: true, get() { return d.get.call(this); },
           set(x) { if (x && !d.get.call(this)) window.__speechAt = performance.now(); d.set.call(this, x); } });",
        json!([]),
    );
    let hands_free = |on: bool| set_hands_free(&s, on);
    let echo_cancellation = |on: bool| set_echo_cancellation(&s, on);
    let say = |text: &str| say(&s, text);
    let long = "Here is the summary of your day. You have three meetings this afternoon. The first one starts at two \
                with the design team. After that, a call with the supplier. The weather will be cloudy with some \
                rain. Remember to take an umbrella. Your package was delivered to the front desk. The report is \
                attached to this message. I converted it to PDF as you wanted. There were two errors in the second \
                table.";
    // the audio threads: the microphone's recorder (its worker, cpal's stream and the PulseAudio client's threads,
    // which inherit the worker's name: the canceller's microphone side runs in the worker) and read-aloud's player
    // (the TTS thread's output stream and client: the canceller's playback side runs in its callback); read-aloud
    // plays through the same stream with the canceller off, so the difference is the canceller's. With the system
    // TTS (the default) the echo reference's recorder is a `hermes-voice-ca…` thread too, and the TTS thread's are
    // speech-dispatcher's client, whose start-up is not the canceller's: counted only when the app plays read-aloud.
    let capture_threads = |by: &std::collections::HashMap<u32, (String, u64)>, app_plays: bool| -> u64 {
        by.values()
            .filter(|(n, _)| n.starts_with("hermes-voice-ca") || (app_plays && n.starts_with("hermes-voice-tt")))
            .map(|(_, t)| t)
            .sum()
    };

    // 1. the canceller's cost: hands-free while a reply is read aloud, with and without it, twice each in turn
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for aec in [true, false, true, false] {
        echo_cancellation(aec);
        hands_free(true);
        say(long);
        s.wait("reading aloud", 30, "return window.__hermesVoice.ttsSpeaking");
        std::thread::sleep(Duration::from_secs(1));
        let (w0, by0) = (Instant::now(), wd::procfs::thread_ticks(pid));
        std::thread::sleep(Duration::from_secs(10));
        let by1 = wd::procfs::thread_ticks(pid);
        let secs = w0.elapsed().as_secs_f64();
        let app_plays = wd::app_log(data.path()).contains("read-aloud played by the app");
        let pct = (capture_threads(&by1, app_plays) - capture_threads(&by0, app_plays)) as f64 / secs;
        // by thread, for where the rest goes (the busiest of the app's threads, % of one core)
        let by = wd::procfs::busiest_threads(pid, &by0, &by1, secs, 0.1);
        let by: Vec<String> = by.into_iter().take(8).collect();
        assert_eq!(s.exec("return window.__barge", json!([])), json!(0), "no echo path: nothing to barge in on");
        eprintln!(
            "hands-free, a reply read aloud, echo cancellation {}: audio threads {pct:.2} % of one core (threads: {})",
            if aec { "on" } else { "off" },
            by.join(", ")
        );
        if aec {
            with.push(pct)
        } else {
            without.push(pct)
        }
        s.exec("window.__hermesVoice.stopSpeaking()", json!([]));
        hands_free(false);
        std::thread::sleep(Duration::from_millis(800));
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let cost = mean(&with) - mean(&without);
    eprintln!("echo cancellation costs {cost:.2} % of one core (goal ≤ 3 %)");
    println!("aec_cpu_percent={cost:.3}");
    echo_cancellation(true);

    // 2. barge-in: first without the speakers' echo, the canceller off then on (where the time goes), then the rig
    let user =
        Command::new("pactl").args(["load-module", "module-null-sink", "sink_name=vuser"]).output().expect("pactl");
    let user_module = String::from_utf8_lossy(&user.stdout).trim().to_string();
    let room = Command::new("pactl")
        .args([
            "load-module",
            "module-loopback",
            "source=vuser.monitor",
            "sink=vsink",
            "latency_msec=30",
            "adjust_time=0",
        ])
        .output()
        .expect("pactl");
    let room_module = String::from_utf8_lossy(&room.stdout).trim().to_string();
    let (said, speakers) = (Tap::start("vuser.monitor"), Tap::start("vspeaker.monitor"));
    let mut barges = 0;
    let mut rounds = |label: &str, n: usize| -> Vec<f64> {
        let mut ms = Vec::new();
        for round in 1..=n {
            barges += 1;
            let frames = audio_frames(&agent).len();
            say(long);
            s.wait("reading aloud", 30, "return window.__hermesVoice.ttsSpeaking");
            std::thread::sleep(Duration::from_millis(2500));
            // the page's clock against the test's: the midpoint of a round trip
            let before = Instant::now();
            let page_now = s.exec("return performance.now()", json!([])).as_f64().unwrap_or(0.0);
            let sync = before + before.elapsed() / 2;
            let played = Instant::now();
            assert!(
                Command::new("paplay")
                    .args(["--device=vuser", "--latency-msec=10"])
                    .arg(&speech)
                    .status()
                    .unwrap()
                    .success()
            );
            s.wait(
                "barge-in stopped read-aloud",
                5,
                &format!("return window.__barge >= {barges} && !window.__hermesVoice.ttsSpeaking"),
            );
            std::thread::sleep(Duration::from_millis(1000));
            let onset = said.first_loud(played, 0.02).expect("the user's speech at its sink");
            let silent = speakers.silent_from(onset, 0.003, Duration::from_millis(500)).expect("the speakers silent");
            let lag = silent.saturating_duration_since(onset).as_secs_f64() * 1000.0;
            // where it went: the page heard of the barge-in (the shell had already stopped read-aloud) at…
            let barge_at = s.exec("return window.__bargeAt", json!([])).as_f64().unwrap_or(0.0);
            let speech_at = s.exec("return window.__speechAt ?? 0", json!([])).as_f64().unwrap_or(0.0);
            let since_onset =
                |page: f64| (page - page_now) - onset.saturating_duration_since(sync).as_secs_f64() * 1000.0;
            let detected = since_onset(barge_at);
            // read-aloud may have been between two sentences when the user began (the speakers silent before the
            // barge-in): then it was stopped when the barge-in came, not when the speakers went quiet
            let stopped = lag.max(detected);
            eprintln!(
                "{label}, round {round}: read-aloud stopped {stopped:.0} ms after the user's speech began (the \
                 listener's onset at {:.0} ms, barge-in at {detected:.0} ms, the speakers quiet from {lag:.0} ms)",
                since_onset(speech_at),
            );
            s.exec("window.__speechAt = 0", json!([]));
            ms.push(stopped);
            agent.wait_log(20, |l| {
                l.iter().filter(|e| matches!(e.item, hermes_devserver::LogItem::Audio { .. })).count() > frames
            });
            std::thread::sleep(Duration::from_millis(1500));
        }
        ms
    };
    echo_cancellation(false);
    hands_free(true);
    rounds("no echo, no canceller", 3);
    hands_free(false);
    echo_cancellation(true);
    hands_free(true);
    rounds("no echo, the canceller on", 3);
    hands_free(false);
    let _echo = SpeakerEcho::start();
    hands_free(true);
    canceller_started(data.path());
    let mut ms = rounds("the rig", ROUNDS);
    hands_free(false);
    let _ = Command::new("pactl").args(["unload-module", &room_module]).status();
    let _ = Command::new("pactl").args(["unload-module", &user_module]).status();
    ms.sort_by(f64::total_cmp);
    eprintln!(
        "barge-in on the rig: median {:.0} ms, worst {:.0} ms over {ROUNDS} rounds (goal ≤ 300 ms)",
        ms[ROUNDS / 2],
        ms[ROUNDS - 1]
    );
    println!("barge_in_ms_median={:.0}", ms[ROUNDS / 2]);
    drop(s);
}
