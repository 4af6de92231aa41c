//! The agents' connections as a front end that owns them keeps them: each agent's state and since when, what a page
//! that subscribes is replayed (the last `ready`, then whatever came after it), the page's channel, and what is worth
//! a notification. Plain data, tested without a window; the desktop shell (`src-tauri/src/hub.rs`) and the resident
//! process run it for their engines. A closed page's channel is detached; it never stops an engine.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use hermes_protocol::Event as EngineEvent;

use crate::App;
use crate::delta::{StreamDelta, UiEvent};

/// An agent's connection as the tray and Settings show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum AgentState {
    Connected,
    /// The first attempt since the engine started (a retry after a drop stays `offline`, since the drop).
    Connecting,
    #[default]
    Offline,
}

/// One agent's line: its state and since when (ms since the epoch).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct AgentStatus {
    pub profile_id: String,
    pub name: String,
    pub state: AgentState,
    /// Ms since the epoch; 0 when the agent has not been started in this run.
    pub since_ms: i64,
}

/// What a page's channel gets: the event (streamed text as tails), `false` once the page is gone.
pub type Sink = Box<dyn FnMut(UiEvent) -> bool + Send>;

/// An incoming item worth a notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Incoming {
    /// A finished reply, or a file.
    Reply,
    /// An approval or question card.
    Card,
}

/// What one engine event meant beyond the page.
#[derive(Debug, Default, PartialEq)]
pub struct Seen {
    pub incoming: Option<Incoming>,
    /// The agent's state changed (the tray and Settings show it).
    pub state_changed: bool,
    /// A page had it.
    pub delivered: bool,
}

struct Sub {
    id: u64,
    /// The window the page lives in (`main`, `quick`): one subscription per window and agent.
    view: String,
    sink: Sink,
    delta: StreamDelta,
}

impl Sub {
    fn send(&mut self, ev: EngineEvent) -> bool {
        let ui = self.delta.encode(ev);
        (self.sink)(ui)
    }
}

/// Items already notified, per agent (a finished reply's later edits are not news).
const NOTIFIED: usize = 64;

#[derive(Default)]
struct Line {
    state: AgentState,
    since_ms: i64,
    /// The last `ready` (what the agent accepts, its session and avatar) and when.
    ready: Option<EngineEvent>,
    /// What came after it (`connecting`, `disconnected`, `access_denied`) and when.
    after: Option<(EngineEvent, i64)>,
    /// The pages that show the agent, one per window (the main window's, the Quick Ask panel's).
    subs: Vec<Sub>,
    notified: VecDeque<String>,
}

impl Line {
    fn set_state(&mut self, state: AgentState, now: i64) -> bool {
        if self.state == state {
            return false;
        }
        self.state = state;
        self.since_ms = now;
        true
    }

    fn first_time(&mut self, id: &str) -> bool {
        if self.notified.iter().any(|n| n == id) {
            return false;
        }
        if self.notified.len() == NOTIFIED {
            self.notified.pop_front();
        }
        self.notified.push_back(id.to_string());
        true
    }
}

/// The agents' connections as the shell knows them: managed state.
#[derive(Default)]
pub struct Hub {
    lines: Mutex<HashMap<String, Line>>,
    next_sub: AtomicU64,
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

impl Hub {
    fn with<T>(&self, profile_id: &str, f: impl FnOnce(&mut Line) -> T) -> T {
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        f(lines.entry(profile_id.to_string()).or_default())
    }

    /// An engine was started for the profile: connecting, nothing to replay yet. Its page (if any) stays attached.
    pub fn started(&self, profile_id: &str) -> bool {
        let now = now_ms();
        self.with(profile_id, |l| {
            l.ready = None;
            l.after = None;
            l.set_state(AgentState::Connecting, now)
        })
    }

    /// Its engine was stopped (`disconnect`): offline, nothing to replay.
    pub fn stopped(&self, profile_id: &str) -> bool {
        let now = now_ms();
        self.with(profile_id, |l| {
            l.ready = None;
            l.after = None;
            l.set_state(AgentState::Offline, now)
        })
    }

    /// The profile is gone.
    pub fn forget(&self, profile_id: &str) {
        self.lines.lock().unwrap_or_else(|e| e.into_inner()).remove(profile_id);
    }

    /// A page of window `view` subscribes to the agent (replacing that window's earlier page: one page per window
    /// and agent; other windows keep theirs): the connection's state is replayed to it first. Returns the
    /// subscription's id (for [`Hub::detach`]).
    pub fn attach(&self, profile_id: &str, view: &str, sink: Sink) -> u64 {
        let id = self.next_sub.fetch_add(1, Ordering::Relaxed) + 1;
        let now = now_ms();
        self.with(profile_id, |l| {
            l.subs.retain(|s| s.view != view);
            let mut sub = Sub { id, view: view.to_string(), sink, delta: StreamDelta::default() };
            let mut alive = true;
            if let Some(ready) = l.ready.clone() {
                alive = sub.send(ready);
            }
            if let Some((ev, at)) = l.after.clone()
                && alive
            {
                alive = sub.send(aged(ev, now - at));
            }
            if alive {
                l.subs.push(sub);
            }
        });
        id
    }

    /// The page of subscription `sub_id` went away (a newer page keeps its own subscription).
    pub fn detach(&self, profile_id: &str, sub_id: u64) {
        self.with(profile_id, |l| l.subs.retain(|s| s.id != sub_id));
    }

    /// Whether a page (of any window) is attached to the agent.
    pub fn has_page(&self, profile_id: &str) -> bool {
        self.with(profile_id, |l| !l.subs.is_empty())
    }

    /// Whether window `view`'s page is attached to the agent.
    pub fn has_page_in(&self, profile_id: &str, view: &str) -> bool {
        self.with(profile_id, |l| l.subs.iter().any(|s| s.view == view))
    }

    /// The agent's state and since when.
    pub fn state(&self, profile_id: &str) -> (AgentState, i64) {
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        lines.get(profile_id).map_or((AgentState::Offline, 0), |l| (l.state, l.since_ms))
    }

    /// One event of the agent's engine: remembered for the replay when it is about the connection, handed to the page
    /// if one is attached (a page that is gone is detached), and judged for a notification.
    pub fn event(&self, profile_id: &str, ev: EngineEvent) -> Seen {
        let now = now_ms();
        self.with(profile_id, |l| {
            let mut seen = Seen::default();
            match &ev {
                EngineEvent::Ready { .. } => {
                    l.ready = Some(ev.clone());
                    l.after = None;
                    seen.state_changed = l.set_state(AgentState::Connected, now);
                }
                EngineEvent::Connecting { .. } => {
                    l.after = Some((ev.clone(), now));
                    // a retry after a drop stays offline (since the drop)
                    if l.state == AgentState::Connected {
                        seen.state_changed = l.set_state(AgentState::Offline, now);
                    }
                }
                EngineEvent::Disconnected { .. } | EngineEvent::AccessDenied { .. } => {
                    l.after = Some((ev.clone(), now));
                    seen.state_changed = l.set_state(AgentState::Offline, now);
                }
                EngineEvent::Message { id, final_: true, .. } if l.first_time(id) => {
                    seen.incoming = Some(Incoming::Reply);
                }
                EngineEvent::Media { id, .. } if l.first_time(id) => seen.incoming = Some(Incoming::Reply),
                EngineEvent::Prompt { id, .. } if l.first_time(id) => seen.incoming = Some(Incoming::Card),
                _ => {}
            }
            // every page gets it (a page that is gone is detached); the last one needs no copy
            let mut subs = std::mem::take(&mut l.subs);
            let last = subs.len().saturating_sub(1);
            let mut ev = Some(ev);
            for (i, mut sub) in subs.drain(..).enumerate() {
                let one = if i == last { ev.take() } else { ev.clone() };
                if let Some(one) = one
                    && sub.send(one)
                {
                    seen.delivered = true;
                    l.subs.push(sub);
                }
            }
            seen
        })
    }
}

/// A replayed `disconnected`: its next attempt is that much nearer.
fn aged(ev: EngineEvent, elapsed_ms: i64) -> EngineEvent {
    match ev {
        EngineEvent::Disconnected { code, reason, retry_in_ms } => EngineEvent::Disconnected {
            code,
            reason,
            retry_in_ms: retry_in_ms.map(|r| r.saturating_sub(u64::try_from(elapsed_ms).unwrap_or(0))),
        },
        other => other,
    }
}

/// The conversation an incoming item of the agent went to: its v3 session's, else the agent's most recent one (the
/// adapter's only one).
pub fn conversation_of(app: &App, profile_id: &str, session: Option<&str>) -> Option<String> {
    let convs = app.conversations(profile_id).ok()?;
    session.and_then(|s| convs.iter().find(|c| c.session == s)).or_else(|| convs.first()).map(|c| c.id.clone())
}

/// The v3 session an incoming reply or file belongs to (`None`: the adapter's one conversation).
pub fn session_of(ev: &EngineEvent) -> Option<String> {
    match ev {
        EngineEvent::Message { session, .. } | EngineEvent::Media { session, .. } => session.clone(),
        _ => None,
    }
}

/// Every profile's line, in the store's order: profiles the hub never started are offline.
pub fn statuses(app: &App, hub: &Hub) -> Vec<AgentStatus> {
    let profiles = app.profiles().unwrap_or_default();
    profiles
        .into_iter()
        .map(|p| {
            let (state, since_ms) = hub.state(&p.id);
            AgentStatus { profile_id: p.id, name: p.name, state, since_ms }
        })
        .collect()
}

/// A conversation with unread messages (the tray's list).
#[derive(Debug, Clone, PartialEq)]
pub struct UnreadConversation {
    pub profile_id: String,
    pub conversation_id: String,
    pub agent: String,
    pub title: String,
    pub unread: u32,
    pub updated_at: i64,
}

/// The conversations with unread messages, most recent first (counted by the store: they survive a restart).
pub fn unread(app: &App) -> Vec<UnreadConversation> {
    let mut out = Vec::new();
    for p in app.profiles().unwrap_or_default() {
        for c in app.conversations(&p.id).unwrap_or_default() {
            if c.unread > 0 {
                out.push(UnreadConversation {
                    profile_id: p.id.clone(),
                    conversation_id: c.id,
                    agent: p.name.clone(),
                    title: c.title,
                    unread: c.unread,
                    updated_at: c.updated_at,
                });
            }
        }
    }
    out.sort_by_key(|b| std::cmp::Reverse(b.updated_at));
    out
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use hermes_protocol::{DisconnectCode, Features};

    use super::*;

    type Got = Arc<Mutex<Vec<UiEvent>>>;

    fn page(alive: bool) -> (Sink, Got) {
        let got: Got = Arc::default();
        let g = got.clone();
        (
            Box::new(move |ev| {
                g.lock().unwrap().push(ev);
                alive
            }),
            got,
        )
    }

    fn names(got: &Got) -> Vec<String> {
        got.lock()
            .unwrap()
            .iter()
            .map(|ev| match ev {
                UiEvent::Engine(e) => serde_json::to_value(e).unwrap()["event"].as_str().unwrap().to_string(),
                UiEvent::Append(_) => "message_append".into(),
            })
            .collect()
    }

    fn ready() -> EngineEvent {
        EngineEvent::Ready {
            session: "mobile:d1".into(),
            avatar_url: None,
            capabilities: Default::default(),
            features: Features { files: false, voice: true, max_file_bytes: Some(0) },
        }
    }

    fn dropped(retry_in_ms: u64) -> EngineEvent {
        EngineEvent::Disconnected { code: DisconnectCode::Lost, reason: "gone".into(), retry_in_ms: Some(retry_in_ms) }
    }

    fn msg(id: &str, text: &str, final_: bool) -> EngineEvent {
        EngineEvent::Message { id: id.into(), text: text.into(), final_, reply_to: None, session: None }
    }

    #[test]
    fn a_page_that_subscribes_gets_the_connection_replayed_then_what_comes() {
        let hub = Hub::default();
        hub.started("p");
        hub.event("p", EngineEvent::Connecting { attempt: 1 });
        hub.event("p", ready());
        let (sink, first) = page(true);
        let first_id = hub.attach("p", "main", sink);
        assert_eq!(names(&first), ["ready"], "a page built while connected learns it at once (with the features)");
        match &first.lock().unwrap()[0] {
            UiEvent::Engine(EngineEvent::Ready { features, .. }) => assert!(!features.files),
            other => panic!("{other:?}"),
        }
        hub.event("p", dropped(8000));
        assert_eq!(names(&first), ["ready", "disconnected"]);

        // the page is rebuilt: the new one gets the truth (ready, then the drop, its retry no later than announced)
        let (sink, second) = page(true);
        let second_id = hub.attach("p", "main", sink);
        assert_eq!(names(&second), ["ready", "disconnected"]);
        match &second.lock().unwrap()[1] {
            UiEvent::Engine(EngineEvent::Disconnected { retry_in_ms: Some(r), .. }) => assert!(*r <= 8000),
            other => panic!("{other:?}"),
        }
        // one page per agent: the old one hears nothing more, and detaching it leaves the new one attached
        hub.detach("p", first_id);
        hub.event("p", EngineEvent::Connecting { attempt: 2 });
        assert_eq!(names(&first), ["ready", "disconnected"]);
        assert_eq!(names(&second), ["ready", "disconnected", "connecting"]);
        assert!(hub.has_page("p"));
        hub.detach("p", second_id);
        assert!(!hub.has_page("p"));

        // after a new `ready` the replay is that ready alone
        hub.event("p", ready());
        let (sink, third) = page(true);
        hub.attach("p", "main", sink);
        assert_eq!(names(&third), ["ready"]);
    }

    #[test]
    fn the_main_window_and_the_quick_ask_panel_each_keep_their_page_and_both_get_the_stream() {
        let hub = Hub::default();
        hub.started("p");
        hub.event("p", ready());
        let (sink, main) = page(true);
        let main_id = hub.attach("p", "main", sink);
        let (sink, quick) = page(true);
        hub.attach("p", "quick", sink);
        assert_eq!(names(&quick), ["ready"], "the panel gets the replay");
        assert_eq!(names(&main), ["ready"], "and the main window's page is not replaced by it");
        hub.event("p", msg("r1", "Hel", false));
        hub.event("p", msg("r1", "Hello", true));
        // each page has its own stream state: both get the first chunk whole and the end as a tail
        assert_eq!(names(&main), ["ready", "message", "message_append"]);
        assert_eq!(names(&quick), ["ready", "message", "message_append"]);
        // the panel's page is rebuilt: it replaces the panel's old page only
        let (sink, quick2) = page(true);
        hub.attach("p", "quick", sink);
        hub.event("p", EngineEvent::Typing { on: true });
        assert_eq!(names(&quick).len(), 3, "the panel's old page hears nothing more");
        assert_eq!(names(&quick2), ["ready", "typing"]);
        assert_eq!(names(&main).last().map(String::as_str), Some("typing"));
        // the main window's page goes: the panel's stays, and still counts as delivered
        hub.detach("p", main_id);
        assert!(hub.has_page("p") && hub.has_page_in("p", "quick") && !hub.has_page_in("p", "main"));
        assert!(hub.event("p", msg("r2", "Hi", true)).delivered);
        assert_eq!(names(&main).last().map(String::as_str), Some("typing"));
    }

    #[test]
    fn a_closed_page_is_detached_and_the_engine_events_still_count() {
        let hub = Hub::default();
        hub.started("p");
        hub.event("p", ready());
        let (sink, got) = page(false); // its channel is gone: the first send fails
        hub.attach("p", "main", sink);
        assert_eq!(names(&got), ["ready"]);
        assert!(!hub.has_page("p"), "detached on the failed send");
        let seen = hub.event("p", msg("r1", "while away", true));
        assert_eq!(seen, Seen { incoming: Some(Incoming::Reply), state_changed: false, delivered: false });
        assert_eq!(names(&got), ["ready"], "nothing is sent to a page that is gone");
        assert_eq!(hub.state("p").0, AgentState::Connected, "the engine runs on");
    }

    #[test]
    fn what_is_news_a_finished_reply_a_file_a_card_once_each() {
        let hub = Hub::default();
        hub.started("p");
        let (sink, got) = page(true);
        hub.attach("p", "main", sink);
        let incoming = |ev| hub.event("p", ev).incoming;
        assert_eq!(incoming(msg("r1", "Hel", false)), None, "a reply still streaming");
        assert_eq!(incoming(msg("r1", "Hello", true)), Some(Incoming::Reply));
        assert_eq!(incoming(msg("r1", "Hello!", true)), None, "an edit of a finished reply is not news");
        let card = EngineEvent::Prompt {
            id: "c1".into(),
            kind: "exec_approval".into(),
            text: "Run it?".into(),
            options: vec![],
            command: Some("rm -rf /".into()),
            description: None,
            timeout_seconds: None,
        };
        assert_eq!(incoming(card.clone()), Some(Incoming::Card));
        assert_eq!(incoming(card), None);
        let media = EngineEvent::Media {
            id: "m1".into(),
            kind: "image".into(),
            mime: None,
            filename: "a.png".into(),
            caption: None,
            path: "/x/a.png".into(),
            size: 1,
            session: None,
        };
        assert_eq!(incoming(media), Some(Incoming::Reply));
        assert_eq!(incoming(EngineEvent::Typing { on: true }), None);
        // the page had every event: the streamed reply's end as a tail, an edit after it whole
        assert_eq!(names(&got), ["message", "message_append", "message", "prompt", "prompt", "media", "typing"]);
    }

    #[test]
    fn states_and_since_a_retry_after_a_drop_stays_offline() {
        let hub = Hub::default();
        assert_eq!(hub.state("p"), (AgentState::Offline, 0), "never started");
        assert!(hub.started("p"));
        assert_eq!(hub.state("p").0, AgentState::Connecting);
        assert!(!hub.event("p", EngineEvent::Connecting { attempt: 1 }).state_changed);
        assert!(hub.event("p", ready()).state_changed);
        assert_eq!(hub.state("p").0, AgentState::Connected);
        assert!(hub.event("p", dropped(1000)).state_changed);
        let (_, since) = hub.state("p");
        std::thread::sleep(Duration::from_millis(5));
        assert!(!hub.event("p", EngineEvent::Connecting { attempt: 2 }).state_changed);
        assert_eq!(hub.state("p"), (AgentState::Offline, since), "offline since the drop");
        hub.event("p", EngineEvent::AccessDenied { reason: "1008".into() });
        assert_eq!(hub.state("p").0, AgentState::Offline);
        assert!(hub.event("p", ready()).state_changed);
        assert!(hub.stopped("p"));
        let (sink, got) = page(true);
        hub.attach("p", "main", sink);
        assert!(names(&got).is_empty(), "a stopped engine replays nothing");
    }

    /// Through a real engine on a real devserver and a real store, with no page at all: the agent's scheduled message
    /// is stored and counted unread by the store, and judged news; a page that subscribes afterwards gets the
    /// connection's state replayed, then the next message.
    #[test]
    fn with_no_page_a_scheduled_message_is_stored_counted_and_news() {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let server = rt.block_on(hermes_devserver::start(hermes_devserver::Config::fast())).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let app = App::open(dir.path()).unwrap();
        let profile = app
            .with_store(|s| s.profile_create(&hermes_store::NewProfile::adapter("Lab", &server.adapter_url())))
            .unwrap();
        let token = hermes_client::Secret::new(server.token().to_string());
        let hub = Arc::new(Hub::default());
        let (tx, rx) = std::sync::mpsc::channel::<Seen>();
        let conn = rt.block_on(async { app.connect(&profile, token, &Default::default()) }).unwrap();
        hub.started(&profile.id);
        let (h, pid) = (hub.clone(), profile.id.clone());
        let mut events = conn.events;
        rt.spawn(async move {
            while let Some(ev) = events.recv().await {
                let _ = tx.send(h.event(&pid, ev));
            }
        });
        let next_news = || loop {
            let seen = rx.recv_timeout(Duration::from_secs(10)).expect("an event");
            if seen.incoming.is_some() {
                return seen;
            }
        };
        let t = std::time::Instant::now();
        while hub.state(&profile.id).0 != AgentState::Connected {
            assert!(t.elapsed() < Duration::from_secs(10), "connected");
            let _ = rx.recv_timeout(Duration::from_millis(100));
        }
        let job = server.schedule_to_device(&profile.device_id, Duration::from_millis(200), "Stand-up in 5");
        let seen = next_news();
        assert_eq!(seen, Seen { incoming: Some(Incoming::Reply), state_changed: false, delivered: false });
        assert!(matches!(job.wait(Duration::from_secs(5)), Some(hermes_devserver::CronOutcome::Delivered { .. })));
        let convs = app.conversations(&profile.id).unwrap();
        assert_eq!(convs[0].unread, 1, "counted by the store");
        assert_eq!(convs[0].preview.as_deref(), Some("Stand-up in 5"), "stored");

        let (sink, got) = page(true);
        hub.attach(&profile.id, "main", sink);
        assert_eq!(names(&got), ["ready"]);
        server.schedule_to_device(&profile.device_id, Duration::from_millis(50), "and another");
        assert!(next_news().delivered, "the page has it");
        assert_eq!(names(&got), ["ready", "message"]);
        assert_eq!(app.conversations(&profile.id).unwrap()[0].unread, 2);
        rt.block_on(conn.handle.shutdown());
        rt.block_on(server.shutdown());
    }
}
