//! What the end-to-end test files share: the loopback agent, a data folder with a profile, launching the app and
//! driving its composer.
#![allow(dead_code)] // each e2e test crate uses a part

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{Driver, Session};

/// The chat list follows its end: no "New messages" pill, and the last row's bottom is inside the list's viewport.
pub const FOLLOWS_BOTTOM: &str =
    "const l = document.querySelector('.vlist'); const rows = [...document.querySelectorAll('.vlist .cell')];
     if (!l || !rows.length || document.querySelector('.wrap .pill')) return false;
     const last = rows.reduce((a, b) => (b.getBoundingClientRect().bottom > a.getBoundingClientRect().bottom ? b : a));
     return last.getBoundingClientRect().bottom <= l.getBoundingClientRect().bottom + 2";

pub fn enabled() -> bool {
    let on = std::env::var("HERMES_E2E").is_ok_and(|v| v == "1");
    if !on {
        eprintln!("skipped: set HERMES_E2E=1 (cargo xtask e2e) to run the end-to-end tests");
    }
    on
}

pub const TOKEN: &str = "e2e-token-5f1c0a9b7d3e4f2a8c6b0d1e3f5a7c9b";

pub struct Agent {
    pub rt: tokio::runtime::Runtime,
    pub server: Option<hermes_devserver::Running>,
    pub addr: std::net::SocketAddr,
    pub media: tempfile::TempDir,
    /// A slow agent (see `Config::upload_delay`): upload progress becomes observable.
    pub slow_uploads: bool,
    /// Applied to the devserver's config at every (re)start: capabilities, limits, …
    pub tweak: Option<fn(&mut hermes_devserver::Config)>,
}

impl Agent {
    pub fn start(addr: Option<std::net::SocketAddr>) -> Agent {
        Agent::start_with(addr, false)
    }
    pub fn start_with(addr: Option<std::net::SocketAddr>, slow_uploads: bool) -> Agent {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let media = tempfile::tempdir().unwrap();
        let mut a = Agent { rt, server: None, addr: "127.0.0.1:0".parse().unwrap(), media, slow_uploads, tweak: None };
        a.boot(addr);
        a
    }
    /// An agent whose devserver config `tweak` changes (its capabilities, its limits…), on a free port.
    pub fn start_tweaked(tweak: fn(&mut hermes_devserver::Config)) -> Agent {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let media = tempfile::tempdir().unwrap();
        let mut a = Agent {
            rt,
            server: None,
            addr: "127.0.0.1:0".parse().unwrap(),
            media,
            slow_uploads: false,
            tweak: Some(tweak),
        };
        a.boot(None);
        a
    }
    pub fn boot(&mut self, addr: Option<std::net::SocketAddr>) {
        let mut cfg = hermes_devserver::Config {
            bind: addr.unwrap_or(self.addr),
            token: TOKEN.into(),
            media_dir: Some(self.media.path().to_path_buf()),
            expire_card_secs: 3,
            ..hermes_devserver::Config::fast()
        };
        if self.slow_uploads {
            cfg.upload_delay = Duration::from_millis(1000);
            cfg.max_media_bytes = 64 * 1024 * 1024;
        }
        if let Some(tweak) = self.tweak {
            tweak(&mut cfg);
        }
        let s = self.rt.block_on(async {
            // the old socket may linger for a moment after a restart
            for _ in 0..50 {
                match hermes_devserver::start(cfg.clone()).await {
                    Ok(s) => return s,
                    Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                }
            }
            hermes_devserver::start(cfg).await.unwrap()
        });
        self.addr = s.addr();
        self.server = Some(s);
    }
    pub fn stop(&mut self) {
        if let Some(s) = self.server.take() {
            self.rt.block_on(s.shutdown());
        }
    }
    pub fn s(&self) -> &hermes_devserver::Running {
        self.server.as_ref().unwrap()
    }
    pub fn url(&self) -> String {
        self.s().adapter_url()
    }
}

/// A data folder with one profile whose token is in the keychain.
pub fn data_with_profile(name: &str, url: &str, token: &str) -> (tempfile::TempDir, String) {
    data_with(name, url, token, hermes_store::Dialect::Adapter)
}

/// Two adapter agents on `agent`, "Lab agent" listed first and "Second agent" below it.
pub fn two_agents(agent: &Agent) -> tempfile::TempDir {
    let (data, _) = data_with_profile("Lab agent", &agent.url(), TOKEN);
    super::profile_with_token(data.path(), "Second agent", &agent.url(), TOKEN, hermes_store::Dialect::Adapter, None);
    data
}

/// Script that finds the embedded bundled avatar's root element (`root`, null while none is shown); follow it with a
/// `return` that reads it (`root.dataset.state`, `.look`).
pub const AVATAR_ROOT: &str = "const f = document.querySelector('#avatar-pane iframe'); const d = f && f.contentDocument; \
                               const root = d && d.getElementById('hermes-avatar');";

/// Polls `ok` (the store, a file…) every 50 ms until it holds; fails after 20 s with `what` (a loaded 2-core machine
/// once took more than 10 s to open hands-free's two audio streams).
pub fn until(what: &str, mut ok: impl FnMut() -> bool) {
    let t = Instant::now();
    while !ok() {
        assert!(t.elapsed() < Duration::from_secs(20), "never: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The app on `data`, its composer on screen. Dropping it ends the WebDriver session, then the driver.
pub struct Launched {
    pub s: Session,
    pub _driver: Driver,
}

pub fn launch(data: &Path) -> Launched {
    let driver = Driver::start(data);
    let s = driver.session(env!("CARGO_BIN_EXE_hermes-desktop"), &[]);
    s.wait("composer", 20, "return !!document.getElementById('composer-input')");
    Launched { s, _driver: driver }
}

/// Script bodies returning the sidebar row of the first / second agent's conversation.
pub const FIRST_ROW: &str = "return document.querySelectorAll('.profile')[0].querySelector('.conv-btn')";
pub const SECOND_ROW: &str = "return document.querySelectorAll('.profile')[1].querySelector('.conv-btn')";

pub fn data_with(name: &str, url: &str, token: &str, dialect: hermes_store::Dialect) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let p = super::profile_with_token(dir.path(), name, url, token, dialect, None);
    (dir, p.device_id)
}

/// Types `text` into the composer (as the page sees typing: an `input` event), without sending it.
pub fn type_text(s: &Session, text: &str) {
    s.exec(
        "const t=document.getElementById('composer-input'); t.focus(); t.value=arguments[0];
         t.dispatchEvent(new Event('input',{bubbles:true}));",
        json!([text]),
    );
}

pub fn type_and_send(s: &Session, text: &str) {
    type_text(s, text);
    s.wait("send enabled", 5, "return !document.querySelector('.composer button.send').disabled");
    s.exec("document.querySelector('.composer button.send').click()", json!([]));
}

pub fn body_has(s: &Session, what: &str, secs: u64) {
    s.wait(&format!("text {what:?}"), secs, &format!("return document.body.innerText.includes({})", json!(what)));
}

/// Every file under `dirs` (recursively), with its bytes.
pub fn files_under(dirs: &[PathBuf]) -> Vec<(PathBuf, Vec<u8>)> {
    paths_under(dirs).into_iter().filter_map(|p| std::fs::read(&p).ok().map(|b| (p, b))).collect()
}

/// Every file's path under `dirs` (recursively), without reading any.
pub fn paths_under(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = dirs.to_vec();
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(t) if t.is_file() => out.push(e.path()),
                _ => {}
            }
        }
    }
    out
}

/// The token is nowhere on disk: not in the app's data folder (SQLite database + WAL, logs, media, tmp), nor in the
/// session's XDG config/data/cache folders (window state, WebKit storage and caches, the encrypted keyring). The
/// database is required to be among the files read (a scan that found nothing would prove nothing).
pub fn assert_token_nowhere(data: &Path, token: &str) {
    let mut dirs = vec![data.to_path_buf()];
    for v in ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"] {
        if let Some(d) = std::env::var_os(v) {
            dirs.push(PathBuf::from(d));
        }
    }
    let files = files_under(&dirs);
    assert!(
        files.iter().any(|(p, b)| p.ends_with(hermes_store::DB_FILE_NAME) && !b.is_empty()),
        "the scan saw no database: {:?}",
        files.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    let needle = token.as_bytes();
    for (p, b) in &files {
        assert!(!b.windows(needle.len()).any(|w| w == needle), "the token is in {}", p.display());
    }
    eprintln!("token scan: {} files under {} folders, no hit", files.len(), dirs.len());
}

pub fn no_xss(s: &Session) {
    assert_eq!(s.exec("return window.__xss === undefined", json!([])), json!(true), "a payload ran");
    assert!(s.alert_text().is_none(), "an alert dialog opened");
}

/// The files the agent received (its media folder keeps each as `<uuid>-<name>`), by name.
pub fn received(agent: &Agent) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = files_under(&[agent.media.path().to_path_buf()])
        .into_iter()
        .filter_map(|(p, b)| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            // `<uuid>-`: 36 characters and a dash
            Some((name.get(37..)?.to_string(), b))
        })
        .collect();
    out.sort();
    out
}

/// A PNG of `w`×`h` pixels of noise (it does not compress: about 3 bytes a pixel).
pub fn noise_png(path: &Path, w: u32, h: u32) {
    let mut x: u32 = 0x9e37_79b9;
    let img = image::RgbImage::from_fn(w, h, |_, _| {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        image::Rgb([x as u8, (x >> 8) as u8, (x >> 16) as u8])
    });
    img.save(path).unwrap();
}

pub fn have(cmd: &str, arg: &str) -> bool {
    Command::new(cmd).arg(arg).output().is_ok_and(|o| o.status.success())
}

/// The headless session's PulseAudio (xtask starts one with a null sink `vsink` as the default source's sink).
pub fn audio_ready() -> bool {
    let ok = have("pactl", "info") && have("espeak-ng", "--version") && have("paplay", "--version");
    if !ok {
        let msg = "no PulseAudio with pactl/paplay/espeak-ng in this session";
        assert!(std::env::var("HERMES_REQUIRE_AUDIO").map_or(true, |v| v != "1"), "{msg}");
        eprintln!("skipped: {msg}");
    }
    ok
}

/// `text` spoken by espeak-ng into `speech.wav` in `dir`.
pub fn espeak_wav(dir: &Path, text: &str) -> PathBuf {
    let speech = dir.join("speech.wav");
    assert!(Command::new("espeak-ng").arg("-w").arg(&speech).arg(text).status().unwrap().success());
    speech
}

/// Keeps the virtual microphone's monitor source streaming with low latency while it lives (capture starts faster,
/// see the linux notes).
pub struct MonitorStream(Option<std::process::Child>);

impl MonitorStream {
    pub fn start() -> MonitorStream {
        MonitorStream(
            Command::new("parec")
                .args(["--latency-msec=20", "-d", "vsink.monitor"])
                .stdout(std::process::Stdio::null())
                .spawn()
                .ok(),
        )
    }
}

impl Drop for MonitorStream {
    fn drop(&mut self) {
        if let Some(k) = self.0.as_mut() {
            let _ = k.kill();
            let _ = k.wait();
        }
    }
}
