//! The resident's core: the engines (one per profile with a token), their events through a [`Hub`], the
//! notifications, the tray's refreshes and its actions, the network watcher and the shutdown.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use hermes_app::dashboard::{self, Dashboard, TrayAction};
use hermes_app::hub::{self, Hub, Incoming};
use hermes_app::settings::AppSettings;
use hermes_app::{App, ConnectOptions};
use hermes_client::{Events, Handle, Secret};
use hermes_protocol::{Command, Event};
use hermes_store::Profile;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Where a profile's token comes from (the keychain; a test's closure). Called off the async threads: a keychain
/// may block on D-Bus or an unlock prompt.
pub type TokenSource = Arc<dyn Fn(&Profile) -> Option<Secret> + Send + Sync>;

/// A conversation to show: what a notification's click and a tray entry lead to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target {
    pub profile_id: String,
    pub conversation_id: String,
}

/// A notification: the agent's name and generic text only, and the conversation a click opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub title: String,
    pub body: String,
    pub target: Option<Target>,
}

/// Shows notifications (the desktop's notification daemon; a test's recorder). Must not block.
pub trait Notifier: Send + Sync {
    fn notify(&self, note: Note);
}

/// What the tray sends on [`Resident::clicks`] as its menu opens (not an entry's id: those are the dashboard's).
pub const MENU_OPENED: &str = "menu-opened";

/// Why a window process may be wanted soon ([`Launcher::show_may_follow`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShowHint {
    /// The tray's menu is opening: its entries are what start the window process.
    MenuOpened,
    /// A notification is raised: its click starts the window process on its conversation.
    Notified,
}

impl ShowHint {
    /// For the log.
    pub fn as_str(self) -> &'static str {
        match self {
            ShowHint::MenuOpened => "the tray's menu opened",
            ShowHint::Notified => "a notification is shown",
        }
    }
}

/// Starts the window process: on nothing in particular (`None`: Show) or on a conversation; or with only the Quick
/// Ask panel (the global shortcut).
pub trait Launcher: Send + Sync {
    /// A start of the window process may follow: the tray's menu is opening, or a notification is raised.
    fn show_may_follow(&self, _why: ShowHint) {}
    fn launch(&self, target: Option<Target>);
    /// The window process with the Quick Ask panel alone; `capture`: the panel opens on a region capture.
    fn quick_ask(&self, capture: bool);
}

/// Draws the dashboard (the StatusNotifierItem; a test's recorder). Must not block.
pub trait TrayView: Send + Sync {
    fn show(&self, dashboard: &Dashboard);
    /// Taken off the bus once every connection is closed (what it was answering answered first: a host that clicked
    /// Quit gets its reply, not a vanished peer).
    fn close(self: Box<Self>) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>> {
        Box::pin(async {})
    }
}

/// What the resident is made of.
pub struct Parts {
    pub app: App,
    pub tokens: TokenSource,
    pub notifier: Arc<dyn Notifier>,
    pub launcher: Arc<dyn Launcher>,
}

/// After an action: go on, or quit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Quit,
}

struct Engine {
    handle: Handle,
    pump: JoinHandle<()>,
}

struct Inner {
    app: App,
    hub: Hub,
    notifier: Arc<dyn Notifier>,
    launcher: Arc<dyn Launcher>,
    tray: Mutex<Option<Box<dyn TrayView>>>,
    engines: tokio::sync::Mutex<HashMap<String, Engine>>,
    clicks: mpsc::UnboundedSender<String>,
    clicked: Mutex<Option<mpsc::UnboundedReceiver<String>>>,
}

/// The running resident (cheap to clone).
#[derive(Clone)]
pub struct Resident(Arc<Inner>);

impl Resident {
    /// Starts one engine per profile whose token the source gives, with the app settings' limits. Returns once every
    /// engine is started (not yet connected): the moment for the ready line.
    pub async fn start(parts: Parts) -> Resident {
        let (clicks, clicked) = mpsc::unbounded_channel();
        let r = Resident(Arc::new(Inner {
            app: parts.app,
            hub: Hub::default(),
            notifier: parts.notifier,
            launcher: parts.launcher,
            tray: Mutex::new(None),
            engines: tokio::sync::Mutex::new(HashMap::new()),
            clicks,
            clicked: Mutex::new(Some(clicked)),
        }));
        let profiles = r.0.app.profiles().unwrap_or_else(|e| {
            tracing::warn!("cannot read the profiles: {e}");
            Vec::new()
        });
        let settings = AppSettings::load(r.0.app.data_dir());
        let opts = ConnectOptions {
            max_download_bytes: Some(settings.max_download_bytes()),
            max_media_bytes: Some(settings.max_media_bytes()),
            media_quota_bytes: Some(settings.media_quota_bytes()),
            ..ConnectOptions::default()
        };
        for p in profiles {
            let (tokens, profile) = (parts.tokens.clone(), p.clone());
            let token = tokio::task::spawn_blocking(move || tokens(&profile)).await.ok().flatten();
            match token {
                Some(token) => r.connect(&p, token, &opts).await,
                None => tracing::info!(profile = %p.id, "no token in the keychain: not connected"),
            }
        }
        r.refresh();
        r
    }

    async fn connect(&self, profile: &Profile, token: Secret, opts: &ConnectOptions) {
        let conn = match self.0.app.connect(profile, token, opts) {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(profile = %profile.id, "not connected: {e}");
                return;
            }
        };
        self.0.hub.started(&profile.id);
        let pump = tokio::spawn(pump(Arc::downgrade(&self.0), profile.id.clone(), conn.events));
        self.0.engines.lock().await.insert(profile.id.clone(), Engine { handle: conn.handle, pump });
    }

    /// The tray, once it exists: shown the dashboard at once, then on every change.
    pub fn set_tray(&self, view: Box<dyn TrayView>) {
        // shown and stored under the lock a refresh takes: an engine's change that comes meanwhile waits and is shown
        // after this (shown first and stored after, a `ready` in between was lost until the next change)
        let mut tray = self.0.tray.lock().unwrap_or_else(|e| e.into_inner());
        view.show(&self.dashboard());
        *tray = Some(view);
    }

    /// Where the tray sends the ids of the items clicked (`hermes_app::dashboard::action` reads them).
    pub fn clicks(&self) -> mpsc::UnboundedSender<String> {
        self.0.clicks.clone()
    }

    /// The dashboard as it stands.
    pub fn dashboard(&self) -> Dashboard {
        Dashboard::new(&self.0.app, &self.0.hub, &AppSettings::load(self.0.app.data_dir()))
    }

    /// The app layer (the store) the engines write to.
    pub fn app(&self) -> &App {
        &self.0.app
    }

    /// The hub (the agents' states).
    pub fn hub(&self) -> &Hub {
        &self.0.hub
    }

    /// The profiles with a running engine.
    pub async fn connected_profiles(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.0.engines.lock().await.keys().cloned().collect();
        ids.sort();
        ids
    }

    fn refresh(&self) {
        self.0.refresh();
    }

    /// A tray action.
    pub async fn act(&self, action: TrayAction) -> Flow {
        let dir = self.0.app.data_dir().to_path_buf();
        match action {
            TrayAction::Show => self.0.launcher.launch(None),
            TrayAction::Open { profile_id, conversation_id } => {
                self.0.launcher.launch(Some(Target { profile_id, conversation_id }));
            }
            TrayAction::Mute => {
                let settings = dashboard::muted_for_an_hour(AppSettings::load(&dir), hub::now_ms());
                if let Err(e) = settings.save(&dir) {
                    tracing::warn!("cannot mute notifications: {e}");
                }
                self.refresh();
            }
            TrayAction::Unmute => {
                let settings = AppSettings { mute_until: 0, ..AppSettings::load(&dir) };
                if let Err(e) = settings.save(&dir) {
                    tracing::warn!("cannot unmute notifications: {e}");
                }
                self.refresh();
            }
            TrayAction::Quit => return Flow::Quit,
            // the resident process never records: its menu has no such item
            TrayAction::StopListening => {}
        }
        Flow::Continue
    }

    /// every engine reconnects at once instead of waiting out its backoff.
    pub async fn reconnect_all(&self) {
        for e in self.0.engines.lock().await.values() {
            let _ = e.handle.send(Command::Reconnect).await;
        }
    }

    /// the OS's "the network is back" / "the machine woke" makes every engine reconnect at once (nothing where
    /// the OS tells nothing: the engines' backoff alone).
    pub fn watch_network(&self) {
        let weak = Arc::downgrade(&self.0);
        tokio::spawn(async move {
            let Some(mut watcher) = hermes_client::netwatch::start().await else { return };
            while let Some(wake) = watcher.next().await {
                let Some(inner) = weak.upgrade() else { return };
                tracing::info!(reason = ?wake.reason, "the network is back: reconnecting every agent");
                Resident(inner).reconnect_all().await;
            }
        });
    }

    /// Until `stop` (SIGTERM, SIGINT) or the tray's Quit: the tray's clicks. Then every engine is shut down.
    pub async fn run(&self, stop: impl Future<Output = ()>) {
        let clicked = self.0.clicked.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(mut clicked) = clicked else {
            tracing::warn!("the resident runs once");
            return;
        };
        tokio::pin!(stop);
        loop {
            tokio::select! {
                id = clicked.recv() => {
                    // the resident keeps a sender: the channel never closes while it runs
                    let Some(id) = id else { break };
                    if id == MENU_OPENED {
                        self.0.launcher.show_may_follow(ShowHint::MenuOpened);
                        continue;
                    }
                    if let Some(action) = dashboard::action(&id) {
                        tracing::info!(?action, "tray");
                        if self.act(action).await == Flow::Quit {
                            break;
                        }
                    }
                }
                () = &mut stop => break,
            }
        }
        self.shutdown().await;
    }

    /// Every engine shut down (its connection closed), all at once.
    pub async fn shutdown(&self) {
        let engines: Vec<(String, Engine)> = self.0.engines.lock().await.drain().collect();
        let stops: Vec<_> = engines
            .into_iter()
            .map(|(id, e)| {
                tokio::spawn(async move {
                    e.handle.shutdown().await;
                    let _ = e.pump.await;
                    id
                })
            })
            .collect();
        for stop in stops {
            if let Ok(id) = stop.await {
                self.0.hub.stopped(&id);
            }
        }
        tracing::info!("every connection closed");
        let tray = self.0.tray.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(tray) = tray {
            tray.close().await;
        }
    }
}

impl Inner {
    fn refresh(&self) {
        let tray = self.tray.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(view) = tray.as_ref() {
            view.show(&Dashboard::new(&self.app, &self.hub, &AppSettings::load(self.app.data_dir())));
        }
    }

    /// An agent's reply, file or card: a notification unless the settings say none.
    fn incoming(&self, profile_id: &str, session: Option<&str>, kind: Incoming) {
        let settings = AppSettings::load(self.app.data_dir());
        if !dashboard::allowed(&settings, kind, hub::now_ms()) {
            return;
        }
        let name = self.app.profile(profile_id).map(|p| p.name).unwrap_or_default();
        let target = hub::conversation_of(&self.app, profile_id, session)
            .map(|conversation_id| Target { profile_id: profile_id.to_string(), conversation_id });
        let body = dashboard::body_line(dashboard::generic_text(kind, &settings.locale));
        // (the hint first: the read-ahead runs on a thread of its own while the notification is raised)
        self.launcher.show_may_follow(ShowHint::Notified);
        self.notifier.notify(Note { title: dashboard::notification_title(&name), body, target });
    }
}

/// One engine's events, for as long as it runs: to the hub, the notifications, the tray.
async fn pump(inner: std::sync::Weak<Inner>, profile_id: String, mut events: Events) {
    while let Some(ev) = events.recv().await {
        let Some(inner) = inner.upgrade() else { return };
        if let Event::AccessDenied { reason } = &ev {
            tracing::warn!(profile = %profile_id, "access denied: {reason}");
        }
        let session = hub::session_of(&ev);
        let seen = inner.hub.event(&profile_id, ev);
        if let Some(kind) = seen.incoming {
            inner.incoming(&profile_id, session.as_deref(), kind);
        }
        if seen.state_changed || seen.incoming.is_some() {
            inner.refresh();
        }
    }
}
