//! End-to-end for the agent's own avatar page (A-27, A-28) through the real app (WebKitWebDriver, Xvfb, keychain —
//! `cargo xtask e2e remote_avatar`). Skipped unless `HERMES_E2E=1`.
//!
//! The page is served by a tiny HTTP server here that counts every connection made to it, and the agent announces it
//! in `ready.avatar_url`.
//!
//! - `e2e_remote_avatar_asks_then_opens_private_without_ipc`: before the user answers, the pane asks (the origin
//!   shown) and nothing connects to the page's host (no TCP probe, no page); "Show it" opens it in its own window,
//!   where every app and plugin command is refused — including Tauri's channel-fetch command, tried for the ids of
//!   the main window's channel data while that data is held back in the queue (the main window gets it intact
//!   afterwards); permission requests, new windows and downloads are refused; its storage is private (a second
//!   window of the same page starts empty); driving it by evaluated script delivers hostile text intact.
//! - `e2e_remote_avatar_refused_never_loads`: a page on another host than the agent's is asked about as such; "Not
//!   now" keeps it closed, also after a restart (remembered per profile); the page's host never sees a connection.

mod wd;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wd::Session;
use wd::app::{Agent, TOKEN, enabled, launch, type_and_send};

/// Quotes, backslashes, `</script>`, newlines, U+2028/9, template syntax, markup, emoji.
const EVIL: &str = "\"); window.__xss=1; (\"\\' ` </script><script>window.__xss=2</script>\n<img src=x onerror=\"window.__xss=3\">\r\n\u{2028}\u{2029} ${window.__xss=4} 🙂 end";

/// The page the agent announces (the devserver's config is a plain `fn` tweak: the URL goes through here).
static ANNOUNCED: Mutex<Option<String>> = Mutex::new(None);

fn announce(cfg: &mut hermes_devserver::Config) {
    cfg.avatar_url = ANNOUNCED.lock().unwrap().clone();
}

/// An agent on 127.0.0.1 announcing `url`, and a data folder with its profile; the profile id.
fn agent_announcing(url: &str) -> (Agent, tempfile::TempDir, String) {
    *ANNOUNCED.lock().unwrap() = Some(url.to_string());
    let agent = Agent::start_tweaked(announce);
    let dir = tempfile::tempdir().unwrap();
    let p =
        wd::profile_with_token(dir.path(), "Avatar agent", &agent.url(), TOKEN, hermes_store::Dialect::Adapter, None);
    (agent, dir, p.id)
}

/// The remote avatar page: tries every kind of IPC, the permission APIs, a new window, a download and storage, and
/// reports what happened (and every avatar call it receives). `speak('probe-channel:[ids]')` makes it try Tauri's
/// channel-fetch command for those ids.
fn remote_page(profile_id: &str, download: &str) -> String {
    let pid = serde_json::to_string(profile_id).unwrap();
    let dl = serde_json::to_string(download).unwrap();
    format!(
        r#"<!doctype html><html><head><meta charset="utf-8"><title>remote avatar</title></head>
<body style="background:#203040;color:#fff;font:14px sans-serif"><h3>Remote avatar</h3><div id="s"></div><script>
function report(o) {{ o.xss = window.__xss === undefined ? null : window.__xss; fetch('/report', {{method: 'POST', body: JSON.stringify(o)}}).catch(function () {{}}); }}
var I = window.__TAURI_INTERNALS__;
function race(p) {{ return Promise.race([p, new Promise(function (_, rej) {{ setTimeout(function () {{ rej('timeout'); }}, 4000); }})]); }}
async function tryInvoke(c, args, opts) {{
  if (!I || typeof I.invoke !== 'function') return 'denied: no IPC object';
  try {{ var r = await race(I.invoke(c, args, opts)); return 'ALLOWED: ' + JSON.stringify(r === undefined ? null : r).slice(0, 300); }}
  catch (e) {{ return 'denied: ' + String((e && e.message) || e).slice(0, 160); }}
}}
async function probeChannel(ids) {{
  var out = {{}};
  for (var i = 0; i < ids.length; i++) {{
    out[ids[i]] = await tryInvoke('plugin:__TAURI_CHANNEL__|fetch', null, {{headers: {{'Tauri-Channel-Id': String(ids[i])}}}});
  }}
  report({{channel: out}});
}}
window.hermesAvatar = {{
  setState: function (s) {{ document.getElementById('s').textContent = s; report({{call: 'setState', arg: s}}); }},
  speak: function (t) {{
    if (typeof t === 'string' && t.indexOf('probe-channel:') === 0) {{ probeChannel(JSON.parse(t.slice(14))); return; }}
    report({{call: 'speak', arg: t}});
  }},
  setVolume: function (v) {{}},
  setSpeechLevel: function (v) {{}}
}};
(async function () {{
  var seen = null; try {{ seen = localStorage.getItem('seen'); localStorage.setItem('seen', 'yes'); }} catch (e) {{ seen = 'error: ' + e; }}
  var cookie = document.cookie; document.cookie = 'seen=yes; max-age=3600';
  report({{storage: {{local: seen, cookie: cookie}}}});
  var out = {{probe: true, internals: !!I, results: {{}}}};
  var cmds = [
    ['app_info', {{}}], ['list_profiles', {{}}], ['voice_devices', {{}}], ['voice_start', {{mode: 'push_to_talk'}}],
    ['avatar_call', {{method: 'speak', arg: 'x'}}], ['avatar_detach', {{open: true, clickThrough: false}}],
    ['avatar_consent', {{profileId: {pid}, origin: 'https://evil.example', consent: 'allowed'}}],
    ['send_command', {{profileId: {pid}, command: {{cmd: 'text', text: 'sent from the remote avatar'}}}}],
    ['plugin:event|listen', {{event: 'tts-event', target: {{kind: 'Any'}}, handler: 1}}],
    ['plugin:window|start_dragging', {{}}], ['plugin:app|version', {{}}], ['plugin:opener|open_url', {{url: 'https://example.com'}}],
    ['plugin:__TAURI_CHANNEL__|fetch', null, {{headers: {{'Tauri-Channel-Id': '0'}}}}]
  ];
  for (var i = 0; i < cmds.length; i++) out.results[cmds[i][0]] = await tryInvoke(cmds[i][0], cmds[i][1], cmds[i][2]);
  report(out);
  var p = {{}};
  async function media(c) {{
    try {{ if (!navigator.mediaDevices) return 'denied: no API'; var st = await race(navigator.mediaDevices.getUserMedia(c)); st.getTracks().forEach(function (t) {{ t.stop(); }}); return 'GRANTED'; }}
    catch (e) {{ return 'denied: ' + ((e && e.name) || e); }}
  }}
  p.microphone = await media({{audio: true}});
  p.camera = await media({{video: true}});
  try {{ p.notifications = window.Notification ? String(await race(Notification.requestPermission())) : 'denied: no API'; }} catch (e) {{ p.notifications = 'denied: ' + e; }}
  p.geolocation = await new Promise(function (res) {{
    if (!navigator.geolocation) return res('denied: no API');
    navigator.geolocation.getCurrentPosition(function () {{ res('GRANTED'); }}, function (e) {{ res('denied: ' + e.code); }});
    setTimeout(function () {{ res('denied: timeout'); }}, 5000);
  }});
  var w = null; try {{ w = window.open('/popup', '_blank'); }} catch (e) {{}}
  p.newWindow = w ? 'OPENED' : 'denied';
  var a = document.createElement('a'); a.href = '/download.bin'; a.download = {dl}; document.body.appendChild(a); a.click();
  report({{perms: p}});
}})();
</script></body></html>"#
    )
}

struct Served {
    url: String,
    reports: Arc<Mutex<Vec<Value>>>,
    page: Arc<Mutex<String>>,
    /// Every connection accepted (a TCP probe counts too).
    connections: Arc<AtomicUsize>,
    /// Request lines seen.
    requests: Arc<Mutex<Vec<String>>>,
}

impl Served {
    fn reports(&self) -> Vec<Value> {
        self.reports.lock().unwrap().clone()
    }
}

/// A one-page HTTP server on `ip` (another origin than the app): serves the page, collects `/report` bodies.
fn serve(ip: &str) -> Served {
    let l = TcpListener::bind((ip, 0)).unwrap();
    let url = format!("http://{ip}:{}/avatar.html", l.local_addr().unwrap().port());
    let served = Served {
        url,
        reports: Arc::default(),
        page: Arc::default(),
        connections: Arc::default(),
        requests: Arc::default(),
    };
    let (r2, p2, c2, q2) =
        (served.reports.clone(), served.page.clone(), served.connections.clone(), served.requests.clone());
    std::thread::spawn(move || {
        for stream in l.incoming().flatten() {
            c2.fetch_add(1, Ordering::SeqCst);
            let page = p2.lock().unwrap().clone();
            let (reports, requests) = (r2.clone(), q2.clone());
            std::thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
                let mut rd = BufReader::new(&stream);
                let mut line = String::new();
                if rd.read_line(&mut line).is_err() {
                    return;
                }
                requests.lock().unwrap().push(line.trim().to_string());
                let mut len = 0usize;
                loop {
                    let mut h = String::new();
                    if rd.read_line(&mut h).is_err() || h.trim().is_empty() {
                        break;
                    }
                    if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0u8; len.min(1 << 20)];
                let _ = rd.read_exact(&mut body);
                let (status, ctype, out) = if line.starts_with("POST /report") {
                    if let Ok(v) = serde_json::from_slice::<Value>(&body) {
                        reports.lock().unwrap().push(v);
                    }
                    ("204 No Content", "text/plain", String::new())
                } else if line.starts_with("GET /avatar.html") {
                    ("200 OK", "text/html; charset=utf-8", page)
                } else if line.starts_with("GET /download.bin") {
                    ("200 OK", "application/octet-stream", "MZ not for you".into())
                } else {
                    ("404 Not Found", "text/plain", "not found".into())
                };
                let mut w = &stream;
                let _ = write!(
                    w,
                    "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{out}",
                    out.len()
                );
            });
        }
    });
    served
}

fn wait_report(served: &Served, secs: u64, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let t = Instant::now();
    loop {
        if let Some(v) = served.reports().into_iter().find(|v| pred(v)) {
            return v;
        }
        assert!(t.elapsed() < Duration::from_secs(secs), "no {what} report; got {:?}", served.reports());
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn connected(s: &Session, agent: &Agent) {
    let t = Instant::now();
    while agent.s().ready_count() == 0 {
        assert!(t.elapsed() < Duration::from_secs(20), "the app never connected");
        std::thread::sleep(Duration::from_millis(50));
    }
    s.wait("voice hub", 10, "return !!window.__hermesVoice");
}

const CARD: &str = "document.querySelector('[data-testid=avatar-consent]')";

/// The consent card in the pane, with the origin it names.
fn consent_card(s: &Session) -> String {
    s.wait("the consent card", 20, &format!("return !!{CARD}"));
    s.exec("return document.querySelector('[data-testid=avatar-consent-origin]').textContent.trim()", json!([]))
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// A pause in which something could have happened (it must not): the app is idle otherwise.
fn settle() {
    std::thread::sleep(Duration::from_millis(1500));
}

fn origin_of(url: &str) -> String {
    let u = url::Url::parse(url).unwrap();
    u.origin().ascii_serialization()
}

/// The main window's channel data held back: every `plugin:__TAURI_CHANNEL__|fetch` of the page waits until
/// `window.__release()`; `window.__held` lists the ids it asked for.
const HOLD_CHANNEL_FETCHES: &str = r#"
window.__held = []; window.__hold = true;
const of = window.fetch.bind(window);
window.fetch = function (u, init) {
  if (window.__hold && String(u).includes('__TAURI_CHANNEL__')) {
    const id = new Headers((init && init.headers) || {}).get('Tauri-Channel-Id');
    return new Promise(function (res, rej) { window.__held.push({id: id, go: function () { of(u, init).then(res, rej); }}); });
  }
  return of(u, init);
};
window.__release = function () { window.__hold = false; const h = window.__held; window.__held = []; h.forEach(function (x) { x.go(); }); return h.length; };
"#;

#[test]
fn e2e_remote_avatar_asks_then_opens_private_without_ipc() {
    if !enabled() {
        return;
    }
    let page = serve("127.0.0.1");
    let (agent, data, profile_id) = agent_announcing(&page.url);
    let download = format!("hermes-e2e-avatar-{}.bin", std::process::id());
    *page.page.lock().unwrap() = remote_page(&profile_id, &download);
    let app = launch(data.path());
    let s = &app.s;
    connected(s, &agent);

    // Asked first: the pane shows the page's origin; nothing has connected to its host (no probe, no page).
    let origin = consent_card(s);
    assert_eq!(origin, origin_of(&page.url));
    assert!(
        s.exec(&format!("return !{CARD}.querySelector('[data-testid=avatar-consent-foreign]')"), json!([]))
            == json!(true),
        "the agent's own host is not flagged as another site"
    );
    settle();
    s.screenshot(&wd::screens().join("avatar-01-consent.png"));
    assert_eq!(page.connections.load(Ordering::SeqCst), 0, "the page's host was contacted before consent");
    assert!(page.reports().is_empty());

    // "Show it": the page opens in its own window (never in the main window's pane).
    s.exec(&format!("{CARD}.querySelector('[data-testid=avatar-consent-allow]').click()"), json!([]));
    s.wait("card gone", 10, &format!("return !{CARD}"));
    let storage = wait_report(&page, 40, "storage", |v| v.get("storage").is_some());
    assert_eq!(storage["storage"]["local"], Value::Null, "a fresh page starts with empty storage");
    let probe = wait_report(&page, 60, "IPC probe", |v| v["probe"] == json!(true));
    eprintln!("remote avatar IPC probe: {probe}");
    let results = probe["results"].as_object().expect("results");
    assert!(results.len() >= 13);
    for (cmd, r) in results {
        let r = r.as_str().unwrap_or_default();
        assert!(r.starts_with("denied"), "the remote avatar page could call {cmd}: {r}");
    }
    let iframes = s.exec("return [...document.querySelectorAll('iframe')].map(f => f.src)", json!([]));
    assert!(!iframes.to_string().contains("127.0.0.1"), "a remote page in an iframe of the main window: {iframes}");
    s.wait("remote note", 10, "return document.body.innerText.includes('agent’s own avatar')");

    // Permission requests, a new window and a download: all refused.
    let perms = wait_report(&page, 40, "permissions", |v| v.get("perms").is_some());
    eprintln!("remote avatar permissions: {perms}");
    for (what, r) in perms["perms"].as_object().unwrap() {
        let r = r.as_str().unwrap_or_default();
        assert!(r.starts_with("denied"), "the remote avatar page got {what}: {r}");
    }
    settle();
    assert!(!page.requests.lock().unwrap().iter().any(|l| l.starts_with("GET /popup")), "a new window loaded");
    // Where WebKit would save it: $HOME, ~/Downloads, the working folder (their names only: $HOME holds the build
    // cache, and reading it all once cost the CI machine its memory), and the whole session folder.
    let home = PathBuf::from(std::env::var_os("HOME").unwrap_or_default());
    let mut landed = Vec::new();
    for d in [home.clone(), home.join("Downloads"), std::env::current_dir().unwrap()] {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            landed.push(e.path());
        }
    }
    if let Some(d) = std::env::var_os("XDG_DATA_HOME") {
        landed.extend(wd::app::paths_under(&[PathBuf::from(d).parent().unwrap().to_path_buf()]));
    }
    landed.retain(|p| p.to_string_lossy().contains(&download));
    assert!(landed.is_empty(), "the page's download was saved: {landed:?}");

    // Nothing it tried reached the agent.
    assert!(
        !agent
            .s()
            .log()
            .iter()
            .any(|e| matches!(&e.item, hermes_devserver::LogItem::Text { text, .. } if text.contains("remote avatar"))),
        "the remote page sent a message"
    );

    // Tauri's channel-fetch command cannot read another window's channel data: the main window's data for a long
    // reply is held in the queue while the remote page asks for exactly those ids (and more); then the main window
    // takes it, intact.
    s.exec(HOLD_CHANNEL_FETCHES, json!([]));
    let marker = format!("channel-secret-{}", std::process::id());
    let long = format!("{marker} {}", "x".repeat(9000));
    type_and_send(s, &long);
    let held =
        s.wait("channel data held in the queue", 20, "return window.__held.length ? window.__held.map(h => h.id) : 0");
    let mut ids: Vec<u64> = held.as_array().unwrap().iter().filter_map(|v| v.as_str()?.parse().ok()).collect();
    assert!(!ids.is_empty(), "held: {held}");
    ids.extend(0..16);
    ids.sort_unstable();
    ids.dedup();
    s.exec("window.__hermesVoice.avatar.call('speak', arguments[0])", json!([format!("probe-channel:{}", json!(ids))]));
    let ch = wait_report(&page, 60, "channel probe", |v| v.get("channel").is_some());
    eprintln!("remote avatar channel-fetch probe: {ch}");
    let ch = ch["channel"].as_object().unwrap();
    assert_eq!(ch.len(), ids.len());
    for (id, r) in ch {
        let r = r.as_str().unwrap_or_default();
        assert!(r.starts_with("denied") && !r.contains(&marker), "channel data {id} read by the remote page: {r}");
    }
    assert!(s.exec("return window.__release()", json!([])).as_u64().unwrap() > 0);
    s.wait(
        "the held reply arrives intact in the main window",
        20,
        &format!("return document.body.innerText.includes({})", json!(format!("You said: {marker}"))),
    );

    // Driven by evaluated script with JSON-encoded arguments (A-28): hostile text arrives intact, runs nothing.
    s.exec("window.__hermesVoice.avatar.call('setState', 'thinking')", json!([]));
    s.exec("window.__hermesVoice.avatar.call('speak', arguments[0])", json!([EVIL]));
    let st = wait_report(&page, 10, "setState", |v| v["call"] == "setState" && v["arg"] == "thinking");
    assert_eq!(st["xss"], Value::Null);
    // (the avatar also spoke the long reply above: the hostile text is the one that must arrive intact)
    let sp =
        wait_report(&page, 10, "the hostile speak text, intact", |v| v["call"] == "speak" && v["arg"] == json!(EVIL));
    assert_eq!(sp["xss"], Value::Null, "nothing in the text ran");
    let _ = std::process::Command::new("import")
        .args(["-window", "root"])
        .arg(wd::screens().join("avatar-02-remote-open-x11.png"))
        .status();

    // Private storage: the same page in a new window starts empty again (nothing kept from the first one).
    let before = page.reports().iter().filter(|v| v.get("storage").is_some()).count();
    let reopen = "return window.__TAURI_INTERNALS__.invoke('avatar_remote', {profileId: arguments[0], url: null})
        .then(() => window.__TAURI_INTERNALS__.invoke('avatar_remote', {profileId: arguments[0], url: arguments[1]}))
        .then((r) => r.kind, (e) => 'error: ' + JSON.stringify(e))";
    assert_eq!(s.exec(reopen, json!([profile_id, page.url])), json!("open"));
    let t = Instant::now();
    while page.reports().iter().filter(|v| v.get("storage").is_some()).count() == before {
        assert!(t.elapsed() < Duration::from_secs(40), "the page did not load again");
        std::thread::sleep(Duration::from_millis(50));
    }
    let again = page.reports().into_iter().rfind(|v| v.get("storage").is_some()).unwrap();
    assert_eq!(again["storage"], json!({"local": null, "cookie": ""}), "the second window saw the first one's storage");
}

#[test]
fn e2e_remote_avatar_refused_never_loads() {
    if !enabled() {
        return;
    }
    // Another host than the agent's (127.0.0.2 is the loopback too, but not the host the profile names).
    let page = serve("127.0.0.2");
    let (agent, data, profile_id) = agent_announcing(&page.url);
    *page.page.lock().unwrap() = remote_page(&profile_id, "never.bin");
    {
        let app = launch(data.path());
        let s = &app.s;
        connected(s, &agent);
        assert_eq!(consent_card(s), origin_of(&page.url));
        let foreign = s.wait(
            "marked as another site",
            5,
            &format!(
                "const f = {CARD}.querySelector('[data-testid=avatar-consent-foreign]'); return f && f.textContent"
            ),
        );
        assert!(foreign.as_str().unwrap().contains("127.0.0.1"), "names the agent's own host: {foreign}");
        let allow = s
            .exec(&format!("return {CARD}.querySelector('[data-testid=avatar-consent-allow]').textContent"), json!([]));
        assert_eq!(allow.as_str().unwrap().trim(), "Allow this site");
        settle();
        s.screenshot(&wd::screens().join("avatar-03-consent-other-site.png"));

        // "Not now": closed, remembered; the pane offers it quietly.
        s.exec(&format!("{CARD}.querySelector('[data-testid=avatar-consent-decline]').click()"), json!([]));
        s.wait("declined line", 10, "return !!document.querySelector('[data-testid=avatar-consent-declined]')");
        settle();
        s.screenshot(&wd::screens().join("avatar-04-declined.png"));
        // and a blocked address (plain http to a public host) says so, with no question
        s.exec(
            "window.__hermesVoice.useRemote(arguments[0], 'http://192.0.2.7:8080/avatar.html')",
            json!([profile_id]),
        );
        s.wait("blocked line", 10, "return !!document.querySelector('[data-testid=avatar-consent-blocked]')");
        assert!(s.exec(&format!("return !{CARD}"), json!([])) == json!(true));
        s.screenshot(&wd::screens().join("avatar-05-blocked.png"));
    }
    let stored = std::fs::read_to_string(data.path().join("avatar-consent.json")).expect("the answer is stored");
    let stored: Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(stored[&profile_id][origin_of(&page.url)], json!("declined"));

    // After a restart: still not shown, not asked again.
    let app = launch(data.path());
    let s = &app.s;
    connected(s, &agent);
    s.wait("declined line", 20, "return !!document.querySelector('[data-testid=avatar-consent-declined]')");
    settle();
    assert!(s.exec(&format!("return !{CARD}"), json!([])) == json!(true), "asked again after a restart");
    assert_eq!(page.connections.load(Ordering::SeqCst), 0, "the refused page's host was contacted");
    assert!(page.reports().is_empty());
}
