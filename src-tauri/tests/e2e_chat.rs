//! The chat flows end to end through the real app: WebKitWebDriver drives the debug binary (under Xvfb, in a D-Bus
//! session with an unlocked gnome-keyring — `cargo xtask e2e` sets that up) against a devserver on the loopback. One
//! scenario a test, each on a fresh data folder and agent. Skipped unless `HERMES_E2E=1`. Screenshots go to
//! `target/e2e-screens/`.

mod wd;

use std::path::Path;
use std::time::{Duration, Instant};

use hermes_protocol::adapter::{Down, DownMedia, DownMessage, DownPrompt, PromptOption};
use serde_json::json;
use wd::app::*;
use wd::keys::{ENTER, SHIFT, TAB};
use wd::{Driver, Session};

/// The app connected to a fresh agent with one profile ("Lab agent"), its composer on screen and no banner.
struct Chat {
    s: Session,
    _driver: Driver,
    data: tempfile::TempDir,
    device: String,
    agent: Agent,
    shots: std::path::PathBuf,
}

fn open_chat() -> Chat {
    open_chat_env(&[])
}

/// [`open_chat`] with extra environment variables for the app ([`Driver::start_env`]).
fn open_chat_env(envs: &[(&str, &str)]) -> Chat {
    let shots = wd::screens();
    let agent = Agent::start(None);
    let (data, device) = data_with_profile("Lab agent", &agent.url(), TOKEN);
    let driver = Driver::start_env(data.path(), envs);
    let s = driver.session(env!("CARGO_BIN_EXE_hermes-desktop"), &[]);
    // connect: the profile opens, the engine reaches ready with the keychain token
    s.wait("composer", 20, "return !!document.getElementById('composer-input')");
    let t = Instant::now();
    while agent.s().ready_count() == 0 {
        assert!(t.elapsed() < Duration::from_secs(20), "the app never connected");
        std::thread::sleep(Duration::from_millis(50));
    }
    s.wait("no banner", 10, "return !document.querySelector('.banner')");
    Chat { s, _driver: driver, data, device, agent, shots }
}

#[test]
fn e2e_chat_send_and_search() {
    if !enabled() {
        return;
    }
    let c = open_chat();
    c.s.screenshot(&c.shots.join("01-connected.png"));
    // the empty composer is one line high: its page rendered before the window was on screen (with no width then),
    // and it measures itself again at its real width
    c.s.wait(
        "a one-line composer",
        5,
        "return document.getElementById('composer-input').getBoundingClientRect().height < 60",
    );
    // send a text
    type_and_send(&c.s, "hello from the e2e test");
    body_has(&c.s, "You said: hello from the e2e test", 15);

    // search across history (SQLite FTS through the `search` command): a hit, then a jump to the message
    c.s.exec(
        "const q = document.getElementById('global-search'); q.focus(); q.value = 'e2e'; q.dispatchEvent(new Event('input', {bubbles: true}));",
        json!([]),
    );
    c.s.wait("search hits", 15, "return document.querySelectorAll('.hits .hit').length >= 2");
    let snippet = c.s.exec("return document.querySelector('.hits .hit .snippet').innerText", json!([]));
    assert!(snippet.as_str().unwrap_or("").contains("e2e"), "snippet: {snippet}");
    assert!(c.s.exec("return !!document.querySelector('.hits mark')", json!([])) == json!(true), "the match is marked");
    c.s.screenshot(&c.shots.join("01b-search.png"));
    c.s.exec("document.querySelector('.hits .hit').click()", json!([]));
    c.s.wait("jumped to the message", 10, "return !!document.querySelector('.row.highlighted')");
    c.s.exec(
        "const q = document.getElementById('global-search'); q.value = ''; q.dispatchEvent(new Event('input', {bubbles: true}));",
        json!([]),
    );
    c.s.wait("conversation back", 10, "return !document.querySelector('.hits')");

    // The seeds' languages through the search box: a Chinese word inside a run without spaces, Russian typed without
    // ё. Each hit's marked text is the word as written in the message.
    type_and_send(&c.s, "请帮我把报告转换成PDF格式");
    body_has(&c.s, "You said: 请帮我把报告转换成PDF格式", 15);
    type_and_send(&c.s, "Пришлите, пожалуйста, отчёт за май");
    body_has(&c.s, "You said: Пришлите, пожалуйста, отчёт за май", 15);
    for (query, marked) in [("报告", "报告"), ("отчет", "отчёт"), ("pdf", "PDF")] {
        c.s.exec(
            "const q = document.getElementById('global-search'); q.focus(); q.value = arguments[0]; q.dispatchEvent(new Event('input', {bubbles: true}));",
            json!([query]),
        );
        c.s.wait(
            &format!("hits for {query}"),
            15,
            &format!(
                "const h = [...document.querySelectorAll('.hits .hit')]; return h.length >= 2 && h.every(e => [...e.querySelectorAll('mark')].some(m => m.textContent === {}))",
                json!(marked)
            ),
        );
        if query == "报告" {
            c.s.screenshot(&c.shots.join("01c-search-chinese.png"));
        }
    }
    c.s.exec(
        "const q = document.getElementById('global-search'); q.value = ''; q.dispatchEvent(new Event('input', {bubbles: true}));",
        json!([]),
    );
    c.s.wait("conversation back", 10, "return !document.querySelector('.hits')");
}

/// The composer's caret stops blinking after GTK's `gtk-cursor-blink-timeout` (10 s) without input and stays on
/// screen, solid; a key press makes it blink again (src-tauri/src/caret.rs, ui/src/lib/util/caret.ts: each blink was a
/// repaint, most of what the visible, idle window cost). Read from the X server's pixels of the composer's field, three times 400 ms apart:
/// a blink (600 ms on, 600 ms off) shows in any such 800 ms.
#[test]
fn e2e_chat_the_caret_stops_blinking_when_idle_and_blinks_again_at_a_key() {
    if !enabled() {
        return;
    }
    let c = open_chat();
    let window = wd::desk::x::shown(wd::desk::app_pid(c._driver.pid()), "Hermes");
    let window = *window.first().expect("the main window on screen");
    let rect = c.s.exec(
        "const r = document.getElementById('composer-input').getBoundingClientRect(); \
         return [Math.round(r.left), Math.round(r.top), Math.round(r.width), Math.round(r.height)];",
        json!([]),
    );
    let n = |i: usize| rect[i].as_i64().unwrap();
    let field = (n(0) as i16, n(1) as i16, n(2) as u16, n(3) as u16);
    let samples = || -> Vec<Vec<u8>> {
        (0..3)
            .map(|i| {
                if i > 0 {
                    std::thread::sleep(Duration::from_millis(400));
                }
                wd::desk::x::pixels(window, field)
            })
            .collect()
    };
    // how much of the field is not its background (the caret is dark on a light field)
    let ink =
        |px: &[u8]| px.chunks_exact(4).filter(|p| u32::from(p[0]) + u32::from(p[1]) + u32::from(p[2]) < 384).count();

    // real key presses (xdotool, through the X server and GTK, as a user's): WebDriver's go to WebKit directly
    c.s.exec("document.getElementById('composer-input').focus()", json!([]));
    wd::desk::within(10, "the main window holds the keyboard focus", || wd::desk::x::shown_and_focused("Hermes"));
    let key = |k: &str| assert!(std::process::Command::new("xdotool").args(["key", k]).status().unwrap().success());
    key("a");
    let blinking = samples();
    assert!(blinking.iter().any(|p| p != &blinking[0]), "the caret blinks after a key");
    let on = blinking.iter().map(|p| ink(p)).max().unwrap();

    // the shell's rest 11.1 s after the key (10 s rounded to whole 1.2 s blinks, and a quarter), the page's refocus
    // 3 s after that (ui/src/lib/util/caret.ts)
    std::thread::sleep(Duration::from_secs(15));
    let idle = samples();
    assert!(idle.iter().all(|p| p == &idle[0]), "no blinking 15 s after the last key");
    assert_eq!(ink(&idle[0]), on, "the caret stays on screen, solid (as in the blink's on phase)");
    c.s.screenshot(&c.shots.join("01d-caret-idle.png"));

    key("b");
    let again = samples();
    assert!(again.iter().any(|p| p != &again[0]), "a key makes it blink again");
}

#[test]
fn e2e_chat_streamed_reply_follows_the_bottom_unless_scrolled_up() {
    if !enabled() {
        return;
    }
    let c = open_chat();
    // streamed reply: one bubble, complete
    type_and_send(&c.s, "/stream");
    let last_line = hermes_devserver::assets::LONG_MARKDOWN.trim_end().lines().last().unwrap().trim().to_string();
    let probe = last_line.trim_start_matches(|c: char| !c.is_alphanumeric()).chars().take(20).collect::<String>();
    body_has(&c.s, &probe, 30);
    std::thread::sleep(Duration::from_millis(300));
    let n = c.s.exec(
        "return [...document.querySelectorAll('.row:not(.out) .bubble')].filter(b => b.innerText.includes('Streaming demo')).length",
        json!([]),
    );
    assert_eq!(n, json!(1), "the streamed reply appears exactly once");
    // Its code block is highlighted: the highlighter is a chunk of its own, loaded on first use (dynamic import under
    // the app's CSP and custom protocol), and its output is only escaped text and <span class>.
    c.s.wait(
        "the code block highlighted",
        10,
        "const c = [...document.querySelectorAll('.row:not(.out) pre code.hljs')].find(e => e.textContent.includes('Hello from Hermes'));
         return !!c && !!c.querySelector('span.hljs-keyword') && [...c.querySelectorAll('*')].every(e => e.tagName === 'SPAN')",
    );
    // Nobody scrolled: the list followed the reply to its end (no "New messages" pill, the last line on screen).
    c.s.wait("the list at the bottom after the stream", 5, FOLLOWS_BOTTOM);
    c.s.screenshot(&c.shots.join("02-streamed.png"));

    // The user scrolls up (by wheel): a reply that arrives leaves them where they are, with a "New messages" pill
    // that brings them back down.
    c.s.exec(
        "const l = document.querySelector('.vlist');
         l.dispatchEvent(new WheelEvent('wheel', {deltaY: -400, bubbles: true})); l.scrollTop = 0; return 1",
        json!([]),
    );
    std::thread::sleep(Duration::from_millis(200));
    let reply = Down::Message(DownMessage {
        id: "while-reading-above".into(),
        text: "A reply that came while you were reading above".into(),
        chunk: None,
        edit: None,
        final_: Some(true),
        reply_to: None,
    });
    c.agent.s().send_raw_to_device(&c.device, &serde_json::to_string(&reply).unwrap());
    c.s.wait("the New messages pill", 10, "return !!document.querySelector('.wrap .pill:not(.subtle)')");
    let top = c.s.exec("return document.querySelector('.vlist').scrollTop", json!([]));
    assert_eq!(top, json!(0), "a reply must not pull a reader who scrolled up back down");
    c.s.exec("document.querySelector('.wrap .pill:not(.subtle)').click()", json!([]));
    c.s.wait("back at the bottom", 5, FOLLOWS_BOTTOM);
}

#[test]
fn e2e_chat_cards_approve_deceptive_and_expire() {
    if !enabled() {
        return;
    }
    let c = open_chat();
    // approval card
    type_and_send(&c.s, "/approve");
    c.s.wait(
        "card",
        15,
        "return [...document.querySelectorAll('article.card button')].some(b => b.innerText.includes('Allow once'))",
    );
    c.s.wait("the card scrolled into view", 5, FOLLOWS_BOTTOM);
    c.s.screenshot(&c.shots.join("03-approval-card.png"));
    c.s.exec(
        "[...document.querySelectorAll('article.card button')].find(b => b.innerText.includes('Allow once')).click()",
        json!([]),
    );
    c.s.wait("answered", 15, "return !!document.querySelector('article.card .outcome')");

    // A deceptive command (bidi override, zero-width character and a Cyrillic letter in a host name, an ANSI clear-line
    // and a carriage return, 300 spaces, a dozen blank lines): every hidden character is a visible mark, the card
    // warns, and "Allow once" waits until the whole command has been read.
    type_and_send(&c.s, "/approve-evil");
    c.s.wait("the deceptive card", 15, "return !!document.querySelector('article.card [data-warning=hidden]')");
    let card = "[...document.querySelectorAll('article.card')].find(c => c.querySelector('[data-warning=hidden]'))";
    let shown = c.s.exec(&format!("return {card}.querySelector('pre.command').innerText"), json!([]));
    let shown = shown.as_str().unwrap_or_default().to_string();
    for mark in ["⟦U+202E⟧", "⟦U+200B⟧", "⟦ESC[2K⟧", "⟦CR⟧", "⟦300 spaces⟧", "⟦U+00A0⟧"] {
        assert!(shown.contains(mark), "{mark} missing from the card: {shown}");
    }
    let mixed = c.s.exec(&format!("return {card}.querySelector('[data-warning=mixed]').innerText"), json!([]));
    assert!(mixed.as_str().unwrap_or_default().contains("U+0430 Cyrillic"), "{mixed}");
    let allow = format!("[...{card}.querySelectorAll('button')].find(b => b.innerText.includes('Allow once'))");
    assert_eq!(c.s.exec(&format!("return {allow}.disabled"), json!([])), json!(true), "Allow before reading");
    c.s.exec(&format!("{card}.scrollIntoView({{block: 'end'}})"), json!([]));
    c.s.screenshot(&c.shots.join("03b-deceptive-card.png"));
    // scrolled to its end in the real layout, the command has been read
    c.s.exec(&format!("const p = {card}.querySelector('pre.command'); p.scrollTop = p.scrollHeight"), json!([]));
    c.s.wait("Allow once enabled", 5, &format!("return !{allow}.disabled"));
    c.s.exec(
        &format!("[...{card}.querySelectorAll('button')].find(b => b.innerText.includes('Deny')).click()"),
        json!([]),
    );
    c.s.wait("denied", 15, &format!("return !!{card}.querySelector('.outcome')"));

    // card expiry
    type_and_send(&c.s, "/expire");
    body_has(&c.s, "This card expires", 15);
    c.s.wait("expired", 20, "return !!document.querySelector('article.card .outcome.expired')");
    c.s.screenshot(&c.shots.join("04-card-expired.png"));
}

#[test]
fn e2e_chat_upload_and_received_media() {
    if !enabled() {
        return;
    }
    let c = open_chat();
    // upload a file (pasted picture) with progress
    c.s.exec(
        "window.__progressSeen = false;
         new MutationObserver(() => { if (document.querySelector('progress, .progress, [role=progressbar]')) window.__progressSeen = true; })
           .observe(document.body, {subtree: true, childList: true});
         const c = document.createElement('canvas'); c.width = 900; c.height = 700;
         const g = c.getContext('2d');
         for (let i = 0; i < 4000; i++) { g.fillStyle = `hsl(${i % 360},80%,${30 + i % 40}%)`; g.fillRect((i * 37) % 900, (i * 53) % 700, 23, 17); }
         c.toBlob(b => {
           const f = new File([b], 'e2e-upload.png', {type: 'image/png'});
           const dt = new DataTransfer(); dt.items.add(f);
           const ev = new ClipboardEvent('paste', {clipboardData: dt, bubbles: true, cancelable: true});
           document.getElementById('composer-input').dispatchEvent(ev);
         }, 'image/png');",
        json!([]),
    );
    c.s.wait("attachment staged", 15, "return !document.querySelector('.composer button.send').disabled");
    c.s.exec("document.querySelector('.composer button.send').click()", json!([]));
    body_has(&c.s, "Got e2e-upload.png", 30);
    let progress_seen = c.s.exec("return window.__progressSeen", json!([]));
    eprintln!("upload progress bar seen: {progress_seen}");
    c.s.screenshot(&c.shots.join("05-upload.png"));

    // receive an image and a voice note
    type_and_send(&c.s, "/media");
    c.s.wait(
        "image loaded over the asset protocol",
        30,
        "const i = [...document.querySelectorAll('.bubble img')].find(i => i.alt === 'A gradient' || (i.src||'').includes('chart'));
         return !!i && i.complete && i.naturalWidth > 0",
    );
    c.s.wait("the voice note's player", 30, "return !!document.querySelector('.bubble .voice button.play')");
    c.s.screenshot(&c.shots.join("06-media.png"));
}

#[test]
fn e2e_chat_xss_corpus_renders_inert() {
    if !enabled() {
        return;
    }
    let c = open_chat();
    // XSS corpus through the real app (frames straight from the agent)
    let payloads = xss_payloads(&c.s);
    assert!(payloads.len() >= 50, "corpus: {}", payloads.len());
    for (i, p) in payloads.iter().enumerate() {
        let frame = Down::Message(DownMessage {
            id: format!("xss-{i}"),
            text: p.clone(),
            chunk: None,
            edit: None,
            final_: Some(true),
            reply_to: None,
        });
        c.agent.s().send_raw_to_device(&c.device, &serde_json::to_string(&frame).unwrap());
    }
    let hostile = "<img src=x onerror=\"window.__xss=1\">";
    let media = Down::Media(DownMedia {
        id: "xss-media".into(),
        kind: "file".into(),
        mime: Some("text/plain".into()),
        filename: Some(format!("{hostile}.txt")),
        caption: Some(format!("<script>window.__xss=1</script>{hostile}")),
        part: Some(0),
        parts: Some(1),
        final_: Some(true),
        size: Some(5),
        data: Some("aGVsbG8=".into()),
        url: None,
    });
    c.agent.s().send_raw_to_device(&c.device, &serde_json::to_string(&media).unwrap());
    let card = Down::Prompt(DownPrompt {
        id: "xss-card".into(),
        kind: "exec_approval".into(),
        text: format!("Run {hostile}?"),
        options: vec![
            PromptOption {
                id: "a".into(),
                label: hostile.into(),
                style: Some("primary\" onclick=\"window.__xss=1".into()),
            },
            PromptOption { id: "b".into(), label: "<svg onload=window.__xss=1>".into(), style: None },
        ],
        command: Some("<script>window.__xss=1</script>".into()),
        description: Some(hostile.into()),
        session: None,
        timeout_seconds: Some(300),
    });
    c.agent.s().send_raw_to_device(&c.device, &serde_json::to_string(&card).unwrap());
    body_has(&c.s, "Run <img", 20);
    // the corpus again, in every other place agent text reaches the UI: card command/description/labels, file names
    // and captions
    for (i, p) in payloads.iter().enumerate().step_by(3) {
        let card = Down::Prompt(DownPrompt {
            id: format!("xss-card-{i}"),
            kind: if i % 2 == 0 { "exec_approval".into() } else { "clarify".into() },
            text: format!("xss card {i}"),
            options: vec![
                PromptOption { id: "a".into(), label: p.clone(), style: Some(p.clone()) },
                PromptOption { id: "other".into(), label: p.clone(), style: None },
            ],
            command: Some(p.clone()),
            description: Some(p.clone()),
            session: None,
            timeout_seconds: Some(300),
        });
        c.agent.s().send_raw_to_device(&c.device, &serde_json::to_string(&card).unwrap());
        let media = Down::Media(DownMedia {
            id: format!("xss-file-{i}"),
            kind: if i % 2 == 0 { "image".into() } else { "document".into() },
            mime: Some(if i % 2 == 0 { "image/svg+xml".into() } else { "text/html".into() }),
            filename: Some(p.chars().take(120).collect()),
            caption: Some(p.clone()),
            part: Some(0),
            parts: Some(1),
            final_: Some(true),
            size: Some(5),
            data: Some("aGVsbG8=".into()),
            url: None,
        });
        c.agent.s().send_raw_to_device(&c.device, &serde_json::to_string(&media).unwrap());
    }
    let last = (payloads.len() - 1) / 3 * 3;
    body_has(&c.s, &format!("xss card {last}"), 30);
    std::thread::sleep(Duration::from_secs(2));
    // scroll through the list so every bubble gets rendered once
    c.s.exec(
        "const l = document.querySelector('.messages, [data-virtua], .list') || document.scrollingElement;
         return new Promise(r => { let y = 0; const step = () => { document.querySelectorAll('*').forEach(e => { if (e.scrollHeight > e.clientHeight + 50) e.scrollTop = y; }); y += 400; if (y < 200000) requestAnimationFrame(step); else r(true); }; step(); })",
        json!([]),
    );
    no_xss(&c.s);
    c.s.screenshot(&c.shots.join("07-xss.png"));
}

#[test]
fn e2e_chat_reconnects_and_keeps_the_token_out_of_files() {
    if !enabled() {
        return;
    }
    let mut c = open_chat();
    type_and_send(&c.s, "hello before the restart");
    body_has(&c.s, "You said: hello before the restart", 15);
    // reconnect banner after the agent restarts
    let addr = c.agent.addr;
    c.agent.stop();
    c.s.wait("reconnect banner", 20, "return !!document.querySelector('.banner')");
    c.s.screenshot(&c.shots.join("08-reconnecting.png"));
    c.agent.boot(Some(addr));
    c.s.wait("banner gone after reconnect", 45, "return !document.querySelector('.banner')");
    type_and_send(&c.s, "back again");
    body_has(&c.s, "You said: back again", 20);

    // the token never reaches the log (with a positive control that the log has the connect lines)
    std::thread::sleep(Duration::from_millis(500));
    let log = wd::app_log(c.data.path());
    assert!(log.contains("connecting"), "the log has the connect lines");
    assert!(!log.contains(TOKEN), "the token leaked into the log");
    let Chat { s, _driver, data, mut agent, .. } = c;
    drop(s);
    drop(_driver);
    agent.stop();
    assert_token_nowhere(data.path(), TOKEN);
}

/// The UI's XSS corpus (ui/src/test/xss.test.ts), evaluated by the page itself (no JS parser here).
fn xss_payloads(s: &Session) -> Vec<String> {
    let src =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/test/xss.test.ts")).unwrap();
    let start = src.find("export const PAYLOADS: string[] = [").unwrap() + "export const PAYLOADS: string[] = ".len();
    let end = start + src[start..].find("\n];").unwrap() + 2;
    let v = s.exec(&format!("const C = 'window.__xss=1'; return {};", &src[start..end]), json!([]));
    serde_json::from_value(v).unwrap()
}

/// What has the keyboard focus: its role or tag, its accessible name (or text), and whether it is the composer.
const FOCUSED: &str = "const e = document.activeElement; if (!e || e === document.body) return 'body';
     return (e.getAttribute('role') || e.tagName.toLowerCase()) + ': ' +
       (e.getAttribute('aria-label') || e.getAttribute('title') || e.innerText || e.id || '').trim().slice(0, 60)";

/// Presses Tab (or Shift+Tab) until `script` is true of the focused element, at most `max` times; returns the focus
/// path walked (for the failure message, and to read the order).
fn tab_to(s: &Session, back: bool, max: usize, what: &str, script: &str) -> Vec<String> {
    let mut path = Vec::new();
    for _ in 0..max {
        s.press(if back { &[SHIFT] } else { &[] }, &[TAB]);
        path.push(s.exec(FOCUSED, json!([])).as_str().unwrap_or_default().to_string());
        if s.exec(&format!("const e = document.activeElement; return !!e && ({script})"), json!([])) == json!(true) {
            return path;
        }
    }
    panic!("{what}: not reached in {max} presses of {}Tab; focus went {path:#?}", if back { "Shift+" } else { "" });
}

/// Keyboard only (WCAG 2.1.1): send a message, approve a card, attach a file and open the settings with real key
/// presses (WebDriver input actions: trusted events, focus moved by the browser) and not one pointer event.
#[test]
fn e2e_chat_keyboard_only_send_approve_attach_settings() {
    if !enabled() {
        return;
    }
    let files = tempfile::tempdir().unwrap();
    let notes = files.path().join("keyboard-notes.txt");
    std::fs::write(&notes, "typed without a mouse\n").unwrap();
    let c = open_chat_env(&[("HERMES_E2E_PICK_FILES", notes.to_str().unwrap())]);
    c.s.exec(
        "window.__pointer = [];
         for (const t of ['pointerdown', 'pointerup', 'mousedown', 'mouseup', 'wheel', 'touchstart'])
           window.addEventListener(t, (e) => window.__pointer.push(t + ' on ' + (e.target && e.target.tagName)), true);",
        json!([]),
    );
    // The composer has the focus when a conversation opens.
    c.s.wait(
        "the composer focused",
        5,
        "return document.activeElement && document.activeElement.id === 'composer-input'",
    );

    // 1. send
    c.s.type_keys("hello by keyboard");
    c.s.press(&[], &[ENTER]);
    body_has(&c.s, "You said: hello by keyboard", 15);

    // 2. a card: from the composer, Shift+Tab goes back into the conversation and reaches the card's buttons
    c.s.type_keys("/approve");
    c.s.press(&[], &[ENTER]);
    c.s.wait(
        "card",
        15,
        "return [...document.querySelectorAll('article.card button')].some(b => b.innerText.includes('Allow once'))",
    );
    // the bundled avatar shows that a card waits for the user (and stops once it is answered)
    let avatar = |want: &str| format!("{AVATAR_ROOT} return !!root && root.dataset.state {want}");
    c.s.wait("the avatar waiting", 10, &avatar("=== 'waiting'"));
    let path = tab_to(
        &c.s,
        true,
        12,
        "the card's Allow once",
        "e.closest('article.card') && e.innerText.includes('Allow once')",
    );
    eprintln!("focus path composer → card: {path:?}");
    c.s.screenshot(&c.shots.join("30-keyboard-card-focused.png"));
    c.s.press(&[], &[ENTER]);
    c.s.wait("answered", 15, "return !!document.querySelector('article.card .outcome')");
    c.s.wait("the avatar no longer waiting", 10, &avatar("!== 'waiting'"));
    until("the agent got the card's answer", || {
        c.agent.s().log().iter().any(|e| matches!(e.item, hermes_devserver::LogItem::PromptAnswer { .. }))
    });

    // an agent that says a tool is running (a state beyond A-11's three): the bundled avatar shows it
    c.agent.s().send_raw_to_device(&c.device, r#"{"t":"avatar","state":"tool"}"#);
    c.s.wait("the avatar's tool pose", 10, &avatar("=== 'tool'"));
    c.agent.s().send_raw_to_device(&c.device, r#"{"t":"avatar","state":"idle"}"#);
    c.s.wait("the avatar idle again", 10, &avatar("=== 'idle'"));

    // 3. attach: forward to the composer's attach button, Enter opens the (answered) file dialog
    let path = tab_to(&c.s, false, 25, "the attach button", "e.matches('.composer .attach')");
    eprintln!("focus path card → attach: {path:?}");
    c.s.press(&[], &[ENTER]);
    c.s.wait("file staged", 15, "return document.querySelector('.composer').innerText.includes('keyboard-notes.txt')");
    tab_to(&c.s, false, 6, "the composer", "e.id === 'composer-input'");
    c.s.press(&[], &[ENTER]);
    body_has(&c.s, "Got keyboard-notes.txt", 20);

    // 4. the settings: Ctrl+, opens them with the focus inside; Escape closes them and gives the focus back
    c.s.press(&[wd::keys::CONTROL], &[","]);
    c.s.wait("settings open", 10, "return !!document.querySelector('[role=dialog], dialog[open]')");
    c.s.wait(
        "the focus inside the settings",
        5,
        "const d = document.querySelector('[role=dialog], dialog[open]'); return !!d && d.contains(document.activeElement)",
    );
    c.s.screenshot(&c.shots.join("31-keyboard-settings.png"));
    c.s.press(&[], &[wd::keys::ESCAPE]);
    c.s.wait("settings closed", 10, "return !document.querySelector('[role=dialog], dialog[open]')");

    let pointer = c.s.exec("return window.__pointer", json!([]));
    assert_eq!(pointer, json!([]), "pointer events during a keyboard-only session");
}

/// What a screen reader reads (Orca's view, over AT-SPI, with the accessibility bridge on): the composer is an
/// editable text field named after the agent, and the last reply's text is in the tree.
#[test]
fn e2e_chat_accessibility_tree_over_atspi() {
    if !enabled() {
        return;
    }
    let c = open_chat_env(&[("NO_AT_BRIDGE", "")]);
    type_and_send(&c.s, "read me aloud please");
    body_has(&c.s, "You said: read me aloud please", 15);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/atspi_tree.py");
    let t = Instant::now();
    let (nodes, last_err) = loop {
        // the system's Python: pyatspi is a Debian package (python3-pyatspi), not in a pyenv or venv one
        let out = std::process::Command::new("/usr/bin/python3").arg(&script).arg("hermes").output().expect("python3");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let nodes: Vec<serde_json::Value> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let has_reply =
            nodes.iter().any(|n| n["text"].as_str().unwrap_or("").contains("You said: read me aloud please"));
        if out.status.success() && has_reply {
            break (nodes, String::new());
        }
        if t.elapsed() > Duration::from_secs(20) {
            break (
                nodes,
                format!("{}\n{}", text.chars().take(3000).collect::<String>(), String::from_utf8_lossy(&out.stderr)),
            );
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let composer = nodes.iter().find(|n| n["name"].as_str().unwrap_or("").starts_with("Message to Lab agent"));
    let composer =
        composer.unwrap_or_else(|| panic!("no composer in the AT-SPI tree ({} objects):\n{last_err}", nodes.len()));
    let states: Vec<&str> = composer["states"].as_array().unwrap().iter().filter_map(|v| v.as_str()).collect();
    let role = composer["role"].as_str().unwrap_or("");
    assert!(states.contains(&"editable") && states.contains(&"focusable"), "composer states {states:?}");
    assert!(matches!(role, "entry" | "text" | "terminal" | "paragraph" | "section"), "composer role {role}");
    let reply = nodes.iter().find(|n| n["text"].as_str().unwrap_or("").contains("You said: read me aloud please"));
    assert!(reply.is_some(), "the last reply is not in the AT-SPI tree:\n{last_err}");
    eprintln!(
        "AT-SPI: composer is a{} {role:?} named {:?}, {} objects read",
        if role.starts_with(['a', 'e']) { "n" } else { "" },
        composer["name"],
        nodes.len()
    );
}
