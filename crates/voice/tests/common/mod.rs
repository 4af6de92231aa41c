//! Shared helpers for the audio integration tests: tool detection with the skip rule, espeak-ng clips, PCM stats,
//! and a private PulseAudio daemon with a virtual microphone.
#![allow(dead_code)]

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Is `HERMES_REQUIRE_AUDIO` set (CI): then missing tools are a failure, not a skip.
pub fn audio_required() -> bool {
    std::env::var_os("HERMES_REQUIRE_AUDIO").is_some_and(|v| !v.is_empty() && v != "0")
}

pub fn have(tool: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `true` when all tools are there; `false` (skip, with a printed reason) when some are missing and audio is not
/// required; panics when some are missing and `HERMES_REQUIRE_AUDIO` is set.
pub fn tools_or_skip(test: &str, tools: &[&str]) -> bool {
    let missing: Vec<&str> = tools.iter().copied().filter(|t| !have(t)).collect();
    if missing.is_empty() {
        return true;
    }
    let msg = format!(
        "{test}: missing {} (apt-get install espeak-ng pulseaudio pulseaudio-utils libasound2-plugins alsa-utils)",
        missing.join(", ")
    );
    assert!(!audio_required(), "HERMES_REQUIRE_AUDIO is set but {msg}");
    eprintln!("SKIPPED {msg}; set HERMES_REQUIRE_AUDIO=1 to make this a failure");
    false
}

/// espeak-ng speech as WAV bytes (22.05 kHz mono PCM16).
pub fn espeak(text: &str, dir: &Path, name: &str) -> (PathBuf, Vec<u8>) {
    let path = dir.join(format!("{name}.wav"));
    let st = Command::new("espeak-ng").arg("-w").arg(&path).arg(text).status().expect("run espeak-ng");
    assert!(st.success(), "espeak-ng failed");
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

pub fn read_i16(wav: &[u8]) -> (hound::WavSpec, Vec<i16>) {
    let mut r = hound::WavReader::new(Cursor::new(wav)).unwrap();
    (r.spec(), r.samples::<i16>().map(Result::unwrap).collect())
}

/// Index range of the audible part: first to last sample with |x| above `thresh` (full scale 32768).
pub fn active(s: &[i16], thresh: i16) -> Option<(usize, usize)> {
    let first = s.iter().position(|x| x.unsigned_abs() > thresh.unsigned_abs())?;
    let last = s.iter().rposition(|x| x.unsigned_abs() > thresh.unsigned_abs())?;
    Some((first, last + 1))
}

pub fn rms(s: &[i16]) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    (s.iter().map(|&x| (f64::from(x) / 32768.0).powi(2)).sum::<f64>() / s.len() as f64).sqrt()
}

/// CPU seconds (user + system) used by this process so far, from /proc/self/stat.
pub fn cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    // fields 14 and 15 of stat (utime, stime) are at 11 and 12 after the ")"
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    ticks / clock_ticks()
}

/// The kernel's clock ticks a second (`/proc/*/stat` counts CPU time in them).
fn clock_ticks() -> f64 {
    let hz = Command::new("getconf").arg("CLK_TCK").output().ok().and_then(|o| String::from_utf8(o.stdout).ok());
    hz.and_then(|s| s.trim().parse().ok()).unwrap_or(100.0)
}

/// A private PulseAudio daemon (own XDG_RUNTIME_DIR) with a null sink `vsink`; the default source is its monitor.
pub struct Pulse {
    pub dir: PathBuf,
    child: Option<Child>,
    keeper: Option<Child>,
}

impl Pulse {
    /// Start it. The caller must have pointed this process's XDG_RUNTIME_DIR at `dir` (see `setup_env`).
    pub fn start(dir: &Path) -> Pulse {
        let _ = std::fs::create_dir_all(dir);
        let child = Command::new("pulseaudio")
            .args([
                "--daemonize=no",
                "--exit-idle-time=-1",
                "--system=false",
                "-n",
                "--load=module-native-protocol-unix",
                "--load=module-null-sink sink_name=vsink",
                "--load=module-always-sink",
            ])
            .arg(format!("--log-target=file:{}/pulse.log", dir.display()))
            .env("XDG_RUNTIME_DIR", dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start pulseaudio");
        let mut p = Pulse { dir: dir.to_path_buf(), child: Some(child), keeper: None };
        let t0 = Instant::now();
        while !p.pactl(&["info"]).0 {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "pulseaudio did not come up; see {}/pulse.log",
                dir.display()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        // A low-latency reader on the monitor keeps the source running, so capture starts in ~25 ms, not 1-2 s.
        p.keeper = Command::new("parec")
            .args(["--latency-msec=20", "-d", "vsink.monitor"])
            .env("XDG_RUNTIME_DIR", dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok();
        p
    }

    pub fn pactl(&self, args: &[&str]) -> (bool, String) {
        match Command::new("pactl").args(args).env("XDG_RUNTIME_DIR", &self.dir).output() {
            Ok(o) => (o.status.success(), String::from_utf8_lossy(&o.stdout).into_owned()),
            Err(_) => (false, String::new()),
        }
    }

    /// Play a file into the null sink (blocks until played).
    pub fn play(&self, wav: &Path) {
        let st = Command::new("paplay")
            .arg("--device=vsink")
            .arg(wav)
            .env("XDG_RUNTIME_DIR", &self.dir)
            .status()
            .expect("run paplay");
        assert!(st.success(), "paplay failed");
    }

    /// The daemon's CPU time so far, in seconds (`/proc`; 0 once it is gone).
    pub fn child_cpu_secs(&self) -> f64 {
        let Some(pid) = self.child.as_ref().map(Child::id) else { return 0.0 };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let Some(end) = stat.rfind(')') else { return 0.0 };
        let f: Vec<&str> = stat[end + 2..].split_whitespace().collect();
        let ticks: f64 = [11, 12].iter().filter_map(|&i| f.get(i)?.parse::<f64>().ok()).sum();
        ticks / clock_ticks()
    }

    /// Kill the daemon (simulates the device going away).
    pub fn kill(&mut self) {
        for c in [self.keeper.take(), self.child.take()].into_iter().flatten() {
            let mut c = c;
            let _ = c.kill();
            let _ = c.wait();
        }
        // speech-dispatcher may have been autospawned by the TTS test in this runtime dir.
        let pidfile = self.dir.join("speech-dispatcher/pid/speech-dispatcher.pid");
        if let Some(pid) = std::fs::read_to_string(pidfile).ok().and_then(|s| s.trim().parse::<u32>().ok()) {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    }
}

impl Drop for Pulse {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One case of a `harness = false` PulseAudio test: a name (a command-line word filters on it) and the case.
pub type Case = (&'static str, fn(&mut Pulse, &Path));

/// The `main` of a `harness = false` PulseAudio test: skips (or fails under HERMES_REQUIRE_AUDIO) without `tools`;
/// points XDG_RUNTIME_DIR at a private folder while the process is still single-threaded (the in-process ALSA pulse
/// plugin and cpal find the private daemon there), starts the daemon and runs the cases in order, each caught; exits
/// 1 if any failed.
pub fn run_cases(test: &str, tools: &[&str], cases: Vec<Case>) {
    if !tools_or_skip(test, tools) {
        return;
    }
    let filter: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let tmp = tempfile::tempdir().unwrap();
    let xdg = tmp.path().join("xdg");
    std::fs::create_dir_all(&xdg).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&xdg, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    // SAFETY: the caller's `main` calls this first: no other thread exists yet to read the environment.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("XDG_RUNTIME_DIR", &xdg);
        std::env::remove_var("PULSE_SERVER");
    }
    let mut pulse = Pulse::start(&xdg);
    let mut failed = Vec::new();
    let mut ran = 0;
    for (name, f) in cases {
        if !filter.is_empty() && !filter.iter().any(|x| name.contains(x.as_str())) {
            continue;
        }
        ran += 1;
        eprintln!("test {name} ...");
        let t = Instant::now();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&mut pulse, tmp.path())));
        eprintln!("test {name} ... {} ({:.1} s)", if r.is_ok() { "ok" } else { "FAILED" }, t.elapsed().as_secs_f64());
        if r.is_err() {
            failed.push(name);
        }
    }
    drop(pulse);
    eprintln!("{test}: {} run, {} failed {:?}", ran, failed.len(), failed);
    if !failed.is_empty() {
        std::process::exit(1);
    }
}
