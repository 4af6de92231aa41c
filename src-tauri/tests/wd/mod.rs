//! A small WebDriver client over HTTP for WebKitWebDriver (no keep-alive pooling surprises: one agent per driver).
#![allow(dead_code)] // shared by the e2e and bench test crates; each uses a part

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub mod app;
pub mod desk;
pub mod procfs;
pub mod tray;

pub struct Driver {
    child: Child,
    pub base: String,
    binary: std::cell::RefCell<Option<String>>,
}

/// The app's log files under `data/logs`, concatenated (start-up marks, registrations, redaction checks).
pub fn app_log(data: &Path) -> String {
    let mut all = String::new();
    if let Ok(rd) = std::fs::read_dir(data.join("logs")) {
        for e in rd.flatten() {
            all.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
        }
    }
    all
}

pub use procfs::descendants;

/// The connections on this test's D-Bus session that belong to `pids` (the app's tray item is one of them).
pub fn bus_names_of(pids: &[u32]) -> Vec<String> {
    let gdbus = |args: &[&str]| {
        let o = Command::new("gdbus").arg("call").arg("--session").args(args).output().ok()?;
        Some(String::from_utf8_lossy(&o.stdout).to_string())
    };
    let dbus = ["--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus", "--method"];
    let names = gdbus(&[&dbus[..], &["org.freedesktop.DBus.ListNames"]].concat()).unwrap_or_default();
    names
        .split('\'')
        .filter(|n| n.starts_with(":1."))
        .filter_map(|n| {
            let out = gdbus(&[&dbus[..], &["org.freedesktop.DBus.GetConnectionUnixProcessID", n]].concat())?;
            let p: u32 = out.trim().trim_start_matches("(uint32 ").split(',').next()?.parse().ok()?;
            pids.contains(&p).then(|| n.to_string())
        })
        .collect()
}

/// Whether `pid` is a window process on standby, not yet woken (`hermes_desktop::standby`): not the app's running
/// instance, whatever its executable.
pub fn is_standby(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .is_ok_and(|c| c.trim_end() == hermes_app::resident::STANDBY_NAME)
}

/// Wait (≤ 15 s) until no process runs `binary`: the next launch must not meet the previous instance (the
/// single-instance plugin would hand over to it and exit, and the WebDriver session would hang).
pub fn wait_gone(binary: &str) {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(15) {
        let running = std::fs::read_dir("/proc").map(|rd| {
            rd.flatten().any(|e| {
                std::fs::read(e.path().join("cmdline"))
                    .is_ok_and(|c| c.split(|b| *b == 0).next().is_some_and(|a| a == binary.as_bytes()))
                    && !e.file_name().to_str().and_then(|p| p.parse().ok()).is_some_and(is_standby)
            })
        });
        if !running.unwrap_or(false) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn agent() -> ureq::Agent {
    ureq::AgentBuilder::new().timeout(Duration::from_secs(60)).build()
}

impl Driver {
    /// WebKitWebDriver on a free port; the app it launches inherits `HERMES_DATA_DIR`.
    pub fn start(data_dir: &Path) -> Driver {
        Driver::start_env(data_dir, &[])
    }

    /// As [`Driver::start`], with extra environment variables for the app (e.g. no Secret Service); an empty value
    /// removes the variable instead (`("NO_AT_BRIDGE", "")`: the accessibility bridge on).
    pub fn start_env(data_dir: &Path, envs: &[(&str, &str)]) -> Driver {
        let port = free_port();
        // Each app gets its own XDG folders under its data folder, so WebKit's storage (the UI's saved language and
        // theme), caches and the window state of one test never leak into the next. The keyring is not among them:
        // gnome-keyring-daemon was started once for the session with the session's folders. The language is pinned
        // too: the tests read English labels, whatever locale the machine runs in.
        let xdg = |name: &str| {
            let d = data_dir.join(name);
            std::fs::create_dir_all(&d).unwrap();
            d
        };
        let mut cmd = Command::new("WebKitWebDriver");
        for (k, _) in envs.iter().filter(|(_, v)| v.is_empty()) {
            cmd.env_remove(k);
        }
        let child = cmd
            .env("XDG_DATA_HOME", xdg("xdg-data"))
            .env("XDG_CACHE_HOME", xdg("xdg-cache"))
            .env("XDG_CONFIG_HOME", xdg("xdg-config"))
            .env("LANG", "C.UTF-8")
            .env("LANGUAGE", "en")
            .env_remove("LC_ALL")
            .env_remove("LC_MESSAGES")
            .envs(envs.iter().filter(|(_, v)| !v.is_empty()).copied())
            .arg(format!("--port={port}"))
            .env("TAURI_WEBVIEW_AUTOMATION", "true")
            .env("HERMES_DATA_DIR", data_dir)
            .stdout(Stdio::null())
            .stderr(if std::env::var_os("HERMES_WD_LOG").is_some() { Stdio::inherit() } else { Stdio::null() })
            .spawn()
            .expect("WebKitWebDriver (apt install webkit2gtk-driver)");
        let base = format!("http://127.0.0.1:{port}");
        let t = Instant::now();
        while agent().get(&format!("{base}/status")).call().is_err() {
            assert!(t.elapsed() < Duration::from_secs(10), "WebKitWebDriver did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Driver { child, base, binary: std::cell::RefCell::new(None) }
    }

    pub fn session(&self, binary: &str, args: &[&str]) -> Session {
        wait_gone(binary);
        *self.binary.borrow_mut() = Some(binary.to_string());
        let caps =
            json!({"capabilities": {"alwaysMatch": {"webkitgtk:browserOptions": {"binary": binary, "args": args}}}});
        let v = call(&self.base, "POST", "/session", Some(caps)).expect("new session");
        let id = v["sessionId"].as_str().expect("session id").to_string();
        Session { base: self.base.clone(), id }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // the app (and its WebKit processes) were started by this driver: end them by pid
        let below = descendants(self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
        for pid in below {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
        if let Some(b) = self.binary.borrow().as_deref() {
            wait_gone(b);
        }
    }
}

fn call(base: &str, method: &str, path: &str, body: Option<Value>) -> Result<Value, Value> {
    let req = agent().request(method, &format!("{base}{path}"));
    let res = match body {
        Some(b) => req.send_json(b),
        None => req.call(),
    };
    match res {
        Ok(r) => Ok(r.into_json::<Value>().map(|v| v["value"].clone()).unwrap_or(Value::Null)),
        Err(ureq::Error::Status(_, r)) => {
            Err(r.into_json::<Value>().map(|v| v["value"].clone()).unwrap_or(Value::Null))
        }
        Err(e) => Err(json!({"error": "transport", "message": e.to_string()})),
    }
}

pub struct Session {
    base: String,
    pub id: String,
}

impl Session {
    fn p(&self, rest: &str) -> String {
        format!("/session/{}{rest}", self.id)
    }

    pub fn exec(&self, script: &str, args: Value) -> Value {
        call(&self.base, "POST", &self.p("/execute/sync"), Some(json!({"script": script, "args": args})))
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// The session's window handles (each page it can drive).
    pub fn handles(&self) -> Vec<String> {
        call(&self.base, "GET", &self.p("/window/handles"), None)
            .ok()
            .and_then(|v| v.as_array().map(|a| a.iter().filter_map(|h| h.as_str().map(String::from)).collect()))
            .unwrap_or_default()
    }

    /// Drives the page `handle` from now on; false when it is gone.
    pub fn switch_to(&self, handle: &str) -> bool {
        call(&self.base, "POST", &self.p("/window"), Some(json!({"handle": handle}))).is_ok()
    }

    pub fn try_exec(&self, script: &str) -> Result<Value, Value> {
        call(&self.base, "POST", &self.p("/execute/sync"), Some(json!({"script": script, "args": []})))
    }

    /// Poll `script` (returns truthy when done) every 50 ms.
    pub fn wait(&self, what: &str, secs: u64, script: &str) -> Value {
        let t = Instant::now();
        loop {
            if let Ok(v) = self.try_exec(script)
                && !(v.is_null() || v == json!(false) || v == json!(0) || v == json!(""))
            {
                return v;
            }
            if t.elapsed() > Duration::from_secs(secs) {
                let body = self.try_exec("return document.body.innerText.slice(-1500)").unwrap_or_default();
                panic!("timed out waiting for {what} ({secs} s). Page ends with:\n{body}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Real key presses through WebDriver's input actions (the browser's own keyboard events, trusted, moving focus
    /// like a person's Tab would): each item of `keys` is pressed and released in turn, while the `mods` are held.
    /// Keys are characters or WebDriver's codes ([`keys`]).
    pub fn press(&self, mods: &[&str], keys: &[&str]) {
        let mut actions = Vec::new();
        for m in mods {
            actions.push(json!({"type": "keyDown", "value": m}));
        }
        for k in keys {
            actions.push(json!({"type": "keyDown", "value": k}));
            actions.push(json!({"type": "keyUp", "value": k}));
        }
        for m in mods.iter().rev() {
            actions.push(json!({"type": "keyUp", "value": m}));
        }
        call(
            &self.base,
            "POST",
            &self.p("/actions"),
            Some(json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]})),
        )
        .unwrap_or_else(|e| panic!("key actions failed: {e}"));
    }

    /// Types `text` key by key ([`Session::press`]).
    pub fn type_keys(&self, text: &str) {
        let chars: Vec<String> = text.chars().map(String::from).collect();
        self.press(&[], &chars.iter().map(String::as_str).collect::<Vec<_>>());
    }

    /// Runs an asynchronous script (its last argument is the callback that ends it).
    pub fn exec_async(&self, script: &str, args: Value) -> Value {
        call(&self.base, "POST", &self.p("/execute/async"), Some(json!({"script": script, "args": args})))
            .unwrap_or_else(|e| panic!("async script failed: {e}\n{script}"))
    }

    /// axe-core (the kept npm package, from `ui/node_modules`) over the page as it is now, WCAG 2.0–2.2 A and AA
    /// rules: the violations of serious or critical impact, each as "rule: help — selectors". The page gets axe's
    /// script once.
    pub fn axe_violations(&self) -> Vec<String> {
        let loaded = self.exec("return typeof window.axe === 'object'", json!([]));
        if loaded != json!(true) {
            let src = std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/node_modules/axe-core/axe.min.js"),
            )
            .expect("ui/node_modules/axe-core (npm ci in ui/)");
            self.exec(&format!("{src}\n;return true"), json!([]));
        }
        let found = self.exec_async(
            "const done = arguments[arguments.length - 1];
             // a screen is judged as it rests: a banner fading in has the colours of half its opacity. Wait (≤ 2 s)
             // for the finite animations and transitions under way; endless ones (a spinner, the avatar) never end.
             const settling = (document.getAnimations ? document.getAnimations() : [])
               .filter(a => a.playState === 'running' && Number.isFinite(a.effect?.getComputedTiming().endTime))
               .map(a => a.finished.catch(() => {}));
             Promise.race([Promise.all(settling), new Promise(r => setTimeout(r, 2000))]).then(() =>
             axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] },
                                 resultTypes: ['violations'] })
               .then(r => done(r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
                 .map(v => `${v.id} (${v.impact}): ${v.help} — ` + v.nodes.slice(0, 6).map(n => n.target.join(' ') + (n.failureSummary ? ' [' + n.failureSummary.replace(/\\s+/g, ' ').slice(0, 220) + ']' : '')).join('; '))))
               .catch(e => done(['axe failed: ' + e])));",
            json!([]),
        );
        serde_json::from_value(found).unwrap_or_else(|e| vec![format!("axe answered oddly: {e}")])
    }

    /// Fails the test when axe finds serious or critical violations on this screen ([`Session::axe_violations`]).
    /// Every screenshot runs it (`HERMES_E2E_AXE=0` turns that off while debugging something else).
    pub fn assert_accessible(&self, screen: &str) {
        let v = self.axe_violations();
        assert!(v.is_empty(), "axe-core on {screen}: {} serious/critical violation(s):\n{}", v.len(), v.join("\n"));
    }

    pub fn screenshot(&self, path: &Path) {
        self.screenshot_only(path);
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        match std::env::var("HERMES_E2E_AXE").as_deref() {
            Ok("0") => {}
            // a survey of the whole suite: every screen's findings appended to e2e-screens/axe-report.txt
            Ok("report") => {
                let v = self.axe_violations();
                if !v.is_empty() {
                    use std::io::Write as _;
                    let mut f = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(screens().join("axe-report.txt"))
                        .unwrap();
                    let _ = writeln!(f, "== {name}\n{}", v.join("\n"));
                }
            }
            _ => self.assert_accessible(&name),
        }
    }

    /// A screenshot without the accessibility check (a screen caught mid-transition on purpose).
    pub fn screenshot_only(&self, path: &Path) {
        use base64::Engine as _;
        // What the tests waited for is in the DOM, not yet necessarily on screen: with software GL a frame can take a
        // few hundred milliseconds, and the snapshot then showed an older frame ("Loading…" in place of a connected
        // chat). Two animation frames later the page has been rendered with it.
        let _ = call(
            &self.base,
            "POST",
            &self.p("/execute/async"),
            Some(json!({
                "script": "const done = arguments[arguments.length - 1]; let sent = false; \
                           const go = () => { if (!sent) { sent = true; done(true); } }; \
                           requestAnimationFrame(() => requestAnimationFrame(go)); setTimeout(go, 1500);",
                "args": []
            })),
        );
        match call(&self.base, "GET", &self.p("/screenshot"), None) {
            Ok(v) => {
                let png = base64::engine::general_purpose::STANDARD.decode(v.as_str().unwrap_or_default()).unwrap();
                std::fs::write(path, png).unwrap();
            }
            Err(e) => eprintln!("screenshot failed: {e}"),
        }
    }

    /// The text of an open alert/confirm/prompt dialog, `None` when there is none.
    pub fn alert_text(&self) -> Option<String> {
        match call(&self.base, "GET", &self.p("/alert/text"), None) {
            Ok(v) => Some(v.as_str().unwrap_or_default().to_string()),
            Err(e) => {
                assert_eq!(e["error"], "no such alert", "unexpected /alert/text answer: {e}");
                None
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = call(&self.base, "DELETE", &format!("/session/{}", self.id), None);
    }
}

/// WebDriver's codes for the keys that are not characters.
pub mod keys {
    pub const TAB: &str = "\u{E004}";
    pub const ENTER: &str = "\u{E007}";
    pub const SHIFT: &str = "\u{E008}";
    pub const CONTROL: &str = "\u{E009}";
    pub const ESCAPE: &str = "\u{E00C}";
    pub const SPACE: &str = "\u{E00D}";
}

/// Where the end-to-end tests save their screenshots: `$CARGO_TARGET_DIR/e2e-screens/`.
pub fn screens() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let d = target.join("e2e-screens");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Waits (once per test process, up to 10 s) until the Secret Service is on the session bus. The keychain crate
/// connects to it once per process and keeps a failure for good: a first call made while the throwaway
/// gnome-keyring was still starting left a whole test with "no default store" on a loaded machine.
fn secret_service_ready() {
    static READY: std::sync::Once = std::sync::Once::new();
    READY.call_once(|| {
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(10) {
            let owned = Command::new("gdbus")
                .args(["call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus"])
                .args(["--method", "org.freedesktop.DBus.NameHasOwner", "org.freedesktop.secrets"])
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("true"));
            if owned {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        eprintln!("no Secret Service on the session bus after 10 s");
    });
}

/// One profile in the data folder `dir`, its token in the keychain (the throwaway gnome-keyring that xtask unlocks).
pub fn profile_with_token(
    dir: &Path,
    name: &str,
    url: &str,
    token: &str,
    dialect: hermes_store::Dialect,
    avatar_url: Option<String>,
) -> hermes_store::Profile {
    let store = hermes_store::Store::open_in(dir).unwrap();
    let p = store
        .profile_create(&hermes_store::NewProfile {
            name: name.into(),
            url: url.into(),
            dialect,
            v3_user_id: None,
            allow_insecure_ws: false,
            avatar_url,
        })
        .unwrap();
    secret_service_ready();
    hermes_client::keychain::set(&p.id, &hermes_client::Secret::new(token))
        .expect("keychain (run under cargo xtask e2e / cargo xtask test)");
    store.profile_set_has_token(&p.id, true).unwrap();
    p
}

/// The reference agent (devserver) on a free loopback port with `token`, in its own runtime; shut down when dropped.
pub struct LoopbackAgent {
    rt: tokio::runtime::Runtime,
    server: Option<hermes_devserver::Running>,
}

impl LoopbackAgent {
    pub fn start(token: &str) -> LoopbackAgent {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let cfg = hermes_devserver::Config {
            bind: "127.0.0.1:0".parse().unwrap(),
            token: token.into(),
            ..hermes_devserver::Config::fast()
        };
        let server = rt.block_on(hermes_devserver::start(cfg)).unwrap();
        LoopbackAgent { rt, server: Some(server) }
    }
    pub fn s(&self) -> &hermes_devserver::Running {
        self.server.as_ref().unwrap()
    }
    pub fn wait_log(
        &self,
        secs: u64,
        pred: impl FnMut(&[hermes_devserver::LogEntry]) -> bool,
    ) -> Option<Vec<hermes_devserver::LogEntry>> {
        self.rt.block_on(self.s().wait_for_log(Duration::from_secs(secs), pred))
    }
}

impl Drop for LoopbackAgent {
    fn drop(&mut self) {
        if let Some(s) = self.server.take() {
            self.rt.block_on(s.shutdown());
        }
    }
}

/// Wall-clock milliseconds since the Unix epoch (comparable with a page's `performance.timeOrigin + now()`).
pub fn epoch_ms() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}
