//! The engine against a reference agent that speaks as the documents say: the capability rule (A-3), an agent's
//! error that stays on its message (and wins over the delivery confirmation that follows it), the retry rule (A-6),
//! and why a connection failed, in a code. The history is a real SQLite store.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use hermes_client::StorePersist;
use hermes_devserver::{Capabilities, Config as ServerConfig, LogItem, Running};
use hermes_protocol::{Command, Dialect, DisconnectCode, Event, Features};
use hermes_store::{Delivery, NewProfile, Store};

struct App {
    store: Arc<Mutex<Store>>,
    profile: hermes_store::Profile,
    conv: String,
    dir: tempfile::TempDir,
}

fn app(url: &str) -> App {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(dir.path()).unwrap();
    let profile = store.profile_create(&NewProfile::adapter("agent", url)).unwrap();
    let conv = store.conversation_for_adapter(&profile.id).unwrap().id;
    App { store: Arc::new(Mutex::new(store)), profile, conv, dir }
}

impl App {
    fn engine(&self, url: &str) -> Client {
        let persist =
            StorePersist::new(self.store.clone(), &self.profile.id, &self.conv, &self.dir.path().join("media"));
        start_with(
            config(url, Dialect::Adapter, hermes_devserver::DEV_TOKEN, &self.profile.device_id, self.dir.path()),
            Box::new(persist),
        )
    }
    fn message(&self, id: &str) -> hermes_store::Message {
        self.store.lock().unwrap().message_get(id).unwrap().expect("the message is in the history")
    }
}

fn text_cmd(text: &str, id: &str, retry_of: Option<&str>) -> Command {
    Command::Text {
        text: text.into(),
        reply_to: None,
        id: Some(id.into()),
        session: None,
        retry_of: retry_of.map(str::to_string),
    }
}

/// The app with an engine for an agent address where nothing listens yet (a port just freed).
async fn offline_app() -> (std::net::SocketAddr, App, Client) {
    let probe = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = probe.local_addr().unwrap();
    drop(probe);
    let url = format!("ws://{addr}/ws");
    let a = app(&url);
    let c = a.engine(&url);
    (addr, a, c)
}

async fn server(capabilities: Capabilities) -> Running {
    hermes_devserver::start(ServerConfig { capabilities, ..ServerConfig::fast() }).await.unwrap()
}

/// A small text file and a small voice clip in `dir`, as the commands that send them (under `ids`, if given).
fn file_and_voice(dir: &std::path::Path, ids: Option<(&str, &str)>) -> (Command, Command) {
    let doc = dir.join("notes.txt");
    std::fs::write(&doc, b"hello file").unwrap();
    let wav = dir.join("hi.wav");
    std::fs::write(&wav, hermes_voice::wav::encode_pcm16_mono_16k(&[0i16, 1000, -1000, 0].repeat(400))).unwrap();
    let (f, v) = ids.map_or((None, None), |(f, v)| (Some(f.to_string()), Some(v.to_string())));
    let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
    (
        Command::File { path: path(&doc), caption: None, id: f, session: None, retry_of: None },
        Command::Audio { path: path(&wav), text: None, id: v, session: None, retry_of: None },
    )
}

/// A-3 decision, end to end: whatever the documented shape of `capabilities` that leaves a feature on — absent,
/// empty, the real adapter's `{"max_media_bytes": N}` — a file and a voice message go out and the agent gets them.
#[tokio::test]
async fn a3_voice_and_files_reach_an_agent_that_announces_only_a_limit_or_nothing() {
    for caps in [Capabilities::Real, Capabilities::Absent, Capabilities::parse("{}").unwrap()] {
        let srv = server(caps.clone()).await;
        let a = app(&srv.adapter_url());
        let mut c = a.engine(&srv.adapter_url());
        let ready = c.wait(10, |e| matches!(e, Event::Ready { .. })).await;
        let Event::Ready { features, .. } = ready else { unreachable!() };
        assert_eq!(features, Features { files: true, voice: true, max_file_bytes: Some(8 * 1024 * 1024) }, "{caps:?}");
        let (file, audio) = file_and_voice(a.dir.path(), Some(("f1", "v1")));
        assert_eq!(c.handle.command(file).await, Ok(Some("f1".into())), "{caps:?}");
        assert_eq!(c.handle.command(audio).await, Ok(Some("v1".into())), "{caps:?}");
        let log = srv
            .wait_for_log(Duration::from_secs(10), |l| l.iter().filter(|e| e.id == "f1" || e.id == "v1").count() == 2)
            .await
            .unwrap_or_else(|| panic!("{caps:?}: the agent did not get both: {:?}", srv.log()));
        assert!(log.iter().any(|e| e.id == "f1" && matches!(e.item, LogItem::Media { .. })));
        assert!(log.iter().any(|e| e.id == "v1" && matches!(e.item, LogItem::Audio { .. })));
        c.handle.shutdown().await;
    }
}

/// A-3 decision: `"media": false` / `"audio": false` switch exactly that feature off; the command is refused with
/// `capability_off` before anything is copied or sent, and the agent gets nothing.
#[tokio::test]
async fn a3_an_agent_that_says_false_gets_nothing_of_that_kind() {
    let srv = server(Capabilities::parse(r#"{"media":false,"audio":false}"#).unwrap()).await;
    let a = app(&srv.adapter_url());
    let mut c = a.engine(&srv.adapter_url());
    let Event::Ready { features, .. } = c.wait(10, |e| matches!(e, Event::Ready { .. })).await else { unreachable!() };
    assert!(!features.files && !features.voice);
    let (file, audio) = file_and_voice(a.dir.path(), None);
    let r = c.handle.command(file).await.unwrap_err();
    assert_eq!((r.code(), r.to_string().as_str()), ("capability_off", "this agent does not accept files"));
    assert_eq!(c.handle.command(audio).await.unwrap_err().code(), "capability_off");
    let rejected = c.wait(5, |e| matches!(e, Event::Rejected { cmd, .. } if cmd == "audio")).await;
    assert!(matches!(rejected, Event::Rejected { code, .. } if code == "capability_off"));
    // text still goes
    c.handle.command(text_cmd("still talking", "t1", None)).await.unwrap();
    srv.wait_for_log(Duration::from_secs(10), |l| l.iter().any(|e| e.id == "t1")).await.expect("text delivered");
    assert!(srv.log().iter().all(|e| e.id == "t1"), "nothing but the text arrived: {:?}", srv.log());
    assert!(!a.dir.path().join("outbox").join("f1").exists());
    c.handle.shutdown().await;
}

/// The agent answers one of our messages with `error{id}` before the Ping/Pong confirmation arrives (the demo's
/// `/error`): the message ends failed with the agent's error, in the events' order the app sees and in the store —
/// the later `delivered` does not overwrite it — and it stays so after a restart. Retrying it under the same id is
/// refused (`id_in_use`: the agent drops repeated ids, A-6); a new message that names it (`retry_of`) goes.
#[tokio::test]
async fn a6_an_agents_error_wins_over_delivery_and_a_retry_is_a_new_message() {
    let srv = server(Capabilities::Real).await;
    let url = srv.adapter_url();
    let a = app(&url);
    let mut c = a.engine(&url);
    c.ready().await;
    c.handle.command(text_cmd("/error", "m1", None)).await.unwrap();
    c.wait(10, |e| matches!(e, Event::Error { id: Some(id), .. } if id == "m1")).await;
    c.wait(10, |e| matches!(e, Event::Delivered { id } if id == "m1")).await;
    let error_at = c.seen.iter().position(|e| matches!(e, Event::Error { id: Some(id), .. } if id == "m1")).unwrap();
    let delivered_at = c.seen.iter().position(|e| matches!(e, Event::Delivered { id } if id == "m1")).unwrap();
    assert!(error_at < delivered_at, "the real order: the agent's error, then the delivery confirmation");
    let m = a.message("m1");
    assert_eq!(m.delivery, Some(Delivery::Failed), "the error wins over the later delivery");
    assert_eq!(m.error.as_ref().map(|e| e.code.as_str()), Some("internal"));

    // Retry with the same id: the agent has it already.
    let r = c.handle.command(text_cmd("/error", "m1", None)).await.unwrap_err();
    assert_eq!(r.code(), "id_in_use");
    assert!(!r.to_string().to_lowercase().contains("constraint"), "no database text reaches the user: {r}");
    assert_eq!(a.message("m1").delivery, Some(Delivery::Failed), "the refused retry changes nothing");
    // Retry as a new message that names the failed one.
    c.handle.command(text_cmd("hello again", "m2", Some("m1"))).await.unwrap();
    c.wait(10, |e| matches!(e, Event::Delivered { id } if id == "m2")).await;
    assert_eq!(a.message("m2").retry_of.as_deref(), Some("m1"));
    let log = srv.log();
    assert_eq!(log.iter().filter(|e| e.id == "m1").map(|e| e.repeats).sum::<u32>(), 0, "m1 was not sent twice");
    assert!(log.iter().any(|e| e.id == "m2"));
    c.handle.shutdown().await;

    // After a restart the history still says failed, with the agent's error.
    let reopened = Store::open_in(a.dir.path()).unwrap();
    let m = reopened.message_get("m1").unwrap().unwrap();
    assert_eq!((m.delivery, m.error.map(|e| e.code)), (Some(Delivery::Failed), Some("internal".into())));
}

/// A message that failed here without reaching the agent (cancelled while queued offline) is resent under its own
/// id when the user retries, and arrives once.
#[tokio::test]
async fn a6_a_message_that_never_reached_the_agent_is_resent_with_its_id() {
    let (addr, a, mut c) = offline_app().await;
    c.wait(5, |e| matches!(e, Event::Disconnected { .. })).await;
    c.handle.command(text_cmd("queued offline", "q1", None)).await.unwrap();
    c.handle.command(Command::Cancel { id: "q1".into() }).await.unwrap();
    assert_eq!(a.message("q1").delivery, Some(Delivery::Failed));
    // the user retries it: same id, back in the queue
    assert_eq!(c.handle.command(text_cmd("queued offline", "q1", None)).await, Ok(Some("q1".into())));
    let m = a.message("q1");
    assert_eq!((m.delivery, m.error), (Some(Delivery::Queued), None));
    // a second retry while it waits is not a second message
    assert_eq!(c.handle.command(text_cmd("queued offline", "q1", None)).await.unwrap_err().code(), "id_in_use");
    let srv = hermes_devserver::start(ServerConfig { bind: addr, demo: false, ..ServerConfig::fast() }).await.unwrap();
    c.handle.command(Command::Reconnect).await.unwrap();
    c.wait(15, |e| matches!(e, Event::Delivered { id } if id == "q1")).await;
    let log = srv.log();
    assert_eq!(log.iter().filter(|e| e.id == "q1").count(), 1);
    assert_eq!(log[0].repeats, 0);
    assert_eq!(a.message("q1").delivery, Some(Delivery::Delivered));
    c.handle.shutdown().await;
}

/// An agent that was never reached says why in a code the app translates: nothing listens → `refused`.
#[tokio::test]
async fn a5_nothing_listening_is_refused_not_a_raw_os_error() {
    let (_addr, _app, mut c) = offline_app().await;
    let ev = c.wait(5, |e| matches!(e, Event::Disconnected { .. })).await;
    let Event::Disconnected { code, reason, .. } = ev else { unreachable!() };
    assert_eq!(code, DisconnectCode::Refused);
    assert!(!reason.contains("os error"), "{reason}");
    c.handle.shutdown().await;
}
