//! End to end through the real app (WebKitWebDriver, Xvfb; see e2e.rs), its engine and store, against the devserver
//! shaped like the real adapter:
//! - A-3 decision: an agent that switches files and voice off (`"media": false`, `"audio": false`) gets an attach
//!   button and a mic that say so before the user tries; the real adapter's `{"max_media_bytes": N}` gets both on;
//! - the agent's `error{id}` stays on the message after the Pong's `delivered` and after a restart; Retry sends
//!   it again as a new message (the agent had it: `id_in_use`), shown as the retry of the failed one;
//! - a profile whose agent cannot be reached says "Can't reach 127.0.0.1:<port> — connection refused".
//!
//! Skipped unless `HERMES_E2E=1` (`cargo xtask e2e e2e_fidelity`). Screenshots go to `target/e2e-screens/`.

mod wd;

use std::time::Duration;

use hermes_devserver::{Capabilities, LogItem};
use serde_json::{Value, json};
use wd::Session;
use wd::app::*;

const ONLINE: &str = "return !!document.querySelector('.status.ready')";
const ATTACH: &str = "document.querySelector('.composer button.attach')";
const MIC: &str = "document.querySelector('.voice-ctl button.mic')";

fn get(s: &Session, script: &str) -> Value {
    s.exec(script, json!([]))
}

/// `aria-disabled` and `title` of a control.
fn control(s: &Session, el: &str) -> (String, String) {
    let v = get(s, &format!("const b = {el}; return b ? [b.getAttribute('aria-disabled'), b.title] : null"));
    let a = v.as_array().unwrap_or_else(|| panic!("no control {el}"));
    (a[0].as_str().unwrap_or("").to_string(), a[1].as_str().unwrap_or("").to_string())
}

/// The texts the agent received, in order, with their ids.
fn texts(agent: &Agent) -> Vec<(String, String)> {
    agent
        .s()
        .log()
        .into_iter()
        .filter_map(|e| match e.item {
            LogItem::Text { text, .. } => Some((e.id, text)),
            _ => None,
        })
        .collect()
}

fn wait_texts(agent: &Agent, what: &str, ok: impl Fn(&[(String, String)]) -> bool) -> Vec<(String, String)> {
    until(what, || ok(&texts(agent)));
    texts(agent)
}

#[test]
fn e2e_fidelity_a3_files_and_voice_off_are_said_before_trying() {
    if !enabled() {
        return;
    }
    let shots = wd::screens();
    let agent = Agent::start_tweaked(|c| {
        let caps = json!({"media": false, "audio": false}).as_object().unwrap().clone();
        c.capabilities = Capabilities::Custom(caps);
    });
    let (data, _) = data_with_profile("Text-only agent", &agent.url(), TOKEN);
    let app = launch(data.path());
    let s = &app.s;
    s.wait("online", 20, ONLINE);
    s.wait("the attach button off", 10, &format!("return {ATTACH}.getAttribute('aria-disabled') === 'true'"));
    assert_eq!(control(s, ATTACH), ("true".into(), "This agent does not accept files".into()));
    s.wait("the mic off", 10, &format!("return {MIC}.getAttribute('aria-disabled') === 'true'"));
    assert_eq!(control(s, MIC), ("true".into(), "This agent does not accept voice messages".into()));
    // pressing them does nothing: no file dialog, no recording
    get(
        s,
        &format!(
            "{ATTACH}.click(); {MIC}.dispatchEvent(new PointerEvent('pointerdown', {{bubbles: true, button: 0}}))"
        ),
    );
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(get(s, "return document.querySelector('.voice-ctl')?.dataset.phase"), json!("idle"));
    // the push-to-talk shortcut (the shell's event) is refused the same way, with the reason by the mic
    get(s, "window.__hermesVoice.press()");
    s.wait(
        "the reason by the mic",
        5,
        "return (document.querySelector('.voice-ctl .live.err')?.innerText || '').includes('does not accept voice')",
    );
    s.screenshot(&shots.join("fidelity-1-files-voice-off.png"));
    // text still goes
    type_and_send(s, "only words");
    body_has(s, "You said: only words", 15);
}

#[test]
fn e2e_fidelity_a3_the_real_adapter_shape_gets_files_and_voice() {
    if !enabled() {
        return;
    }
    let shots = wd::screens();
    // the devserver's default: `{"max_media_bytes": 8388608}` and nothing invented
    let agent = Agent::start(None);
    assert_eq!(agent.s().config().capabilities, Capabilities::Real);
    let (data, _) = data_with_profile("Real-shaped agent", &agent.url(), TOKEN);
    let app = launch(data.path());
    let s = &app.s;
    s.wait("online", 20, ONLINE);
    assert_eq!(control(s, ATTACH), ("false".into(), "Attach files".into()));
    let (off, title) = control(s, MIC);
    assert_eq!(off, "false");
    assert!(title.starts_with("Hold to talk"), "{title}");
    s.screenshot(&shots.join("fidelity-2-real-shape-on.png"));
}

/// The bubble of the n-th message the user sent with `text` (0 = the first), as a script expression.
fn out_row(text: &str, n: usize) -> String {
    format!(
        "[...document.querySelectorAll('.row.out')].filter(r => r.querySelector('.plain')?.innerText === {})[{n}]",
        json!(text)
    )
}

#[test]
fn e2e_fidelity_a6_an_agent_error_stays_and_retry_sends_a_new_message() {
    if !enabled() {
        return;
    }
    let shots = wd::screens();
    let agent = Agent::start(None);
    let (data, _) = data_with_profile("Demo agent", &agent.url(), TOKEN);
    let first = out_row("/error", 0);
    let second = out_row("/error", 1);
    let failed = |row: &str| {
        format!(
            "const r = {row}; return !!r && !!r.querySelector('.bubble.failed') && !r.querySelector('[aria-label=\"Delivered\"]')"
        )
    };
    let line = |row: &str| format!("{row}.nextElementSibling");
    {
        let app = launch(data.path());
        let s = &app.s;
        s.wait("online", 20, ONLINE);
        type_and_send(s, "/error");
        s.wait("the error on the message", 15, &failed(&first));
        body_has(s, "Something went wrong on the agent.", 5);
        // a later message's answer comes after the first one's Pong (A-6: in order): its `delivered` has come by now
        type_and_send(s, "after the error");
        body_has(s, "You said: after the error", 15);
        s.wait("still failed after its delivered", 2, &failed(&first));
        s.screenshot(&shots.join("fidelity-3-error-stays.png"));

        // Retry: the agent had it (it answered with the error), so it goes as a new message with a new id
        get(
            s,
            &format!(
                "[...{}.querySelectorAll('button')].find(b => b.innerText.includes('Retry')).click()",
                line(&first)
            ),
        );
        let got = wait_texts(&agent, "the retry received", |t| t.iter().filter(|(_, x)| x == "/error").count() == 2);
        let ids: Vec<&String> = got.iter().filter(|(_, x)| x == "/error").map(|(id, _)| id).collect();
        assert_ne!(ids[0], ids[1], "the retry went under a new id");
        s.wait("the retry shown", 15, &format!("return !!{second}"));
        s.wait(
            "marked as the retry, and the failed one as sent again",
            10,
            &format!(
                "return ({second}.innerText || '').includes('Sent again') && ({}.innerText || '').includes('Sent again below')
                 && ![...{}.querySelectorAll('button')].some(b => b.innerText.includes('Retry'))",
                line(&first),
                line(&first)
            ),
        );
        // the demo agent refuses the retry too (it is `/error` again): that one fails on its own
        s.wait("the retry's own error", 15, &failed(&second));
        s.screenshot(&shots.join("fidelity-4-retried.png"));
        // the agent got each id once (no repeat of the first)
        let log = agent.s().log();
        assert!(log.iter().all(|e| e.repeats == 0), "a repeated id: {log:?}");
        // the store keeps it: failed with the agent's error, the retry pointing at it
        let store = hermes_store::Store::open_in(data.path()).unwrap();
        until("the retry stored with retry_of", || {
            store.message_get(ids[1]).unwrap().is_some_and(|m| m.retry_of.as_deref() == Some(ids[0].as_str()))
        });
        let m = store.message_get(ids[0]).unwrap().unwrap();
        assert_eq!(m.delivery, Some(hermes_store::Delivery::Failed), "{m:?}");
        assert_eq!(m.error.as_ref().map(|e| e.code.as_str()), Some("internal"), "{m:?}");
        drop(app);
    }
    // after a restart: the same picture from the store
    let app = launch(data.path());
    let s = &app.s;
    s.wait("the failed one back, failed", 20, &failed(&first));
    s.wait(
        "its error back",
        5,
        &format!("return ({}.innerText || '').includes('Something went wrong on the agent.')", line(&first)),
    );
    s.wait(
        "the retry mark back",
        5,
        &format!(
            "return ({second}.innerText || '').includes('Sent again') && ({}.innerText || '').includes('Sent again below')",
            line(&first)
        ),
    );
    s.screenshot(&shots.join("fidelity-5-after-restart.png"));
}

#[test]
fn e2e_fidelity_an_agent_that_cannot_be_reached() {
    if !enabled() {
        return;
    }
    let shots = wd::screens();
    // a port nothing listens on
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (data, _) = data_with_profile("Closed agent", &format!("ws://127.0.0.1:{port}/ws"), TOKEN);
    let app = launch(data.path());
    let s = &app.s;
    let want = format!("Can't reach 127.0.0.1:{port} — connection refused");
    s.wait(
        "the banner names the address and why",
        20,
        &format!("return (document.querySelector('.banner.warn strong')?.innerText || '') === {}", json!(want)),
    );
    let banner = get(s, "return document.querySelector('.banner.warn').innerText");
    let banner = banner.as_str().unwrap_or("");
    assert!(!banner.contains("os error") && !banner.contains("Connection lost"), "{banner}");
    s.screenshot(&shots.join("fidelity-6-cannot-reach.png"));
}
