//! The resident in process, through real engines on a real devserver (loopback) and a real store, with its
//! notifications, window launches and tray dashboards recorded: what it connects, what a scheduled message does
//! (stored, counted, one generic notification leading to its conversation), the tray's actions (open, mute, unmute,
//! show, quit) and the shutdown that closes every connection.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hermes_app::App;
use hermes_app::dashboard::{Dashboard, TrayItem};
use hermes_app::hub::AgentState;
use hermes_app::settings::AppSettings;
use hermes_client::Secret;
use hermes_resident::{Launcher, Note, Notifier, Parts, Resident, ShowHint, Target, TrayView};
use hermes_store::{NewProfile, Profile};
use tokio::sync::mpsc;

/// Generous bounds for what a loopback agent does in milliseconds (a loaded CI machine); never a measurement.
const WAIT: Duration = Duration::from_secs(20);

struct Notes(mpsc::UnboundedSender<Note>);
impl Notifier for Notes {
    fn notify(&self, note: Note) {
        let _ = self.0.send(note);
    }
}

/// The window processes started, the hints that one may follow (what the real launcher reads ahead on).
#[derive(Default)]
struct Windows(Mutex<Vec<Option<Target>>>, Option<mpsc::UnboundedSender<()>>, Mutex<Vec<ShowHint>>);
impl Launcher for Windows {
    fn show_may_follow(&self, why: ShowHint) {
        self.2.lock().unwrap().push(why);
    }
    fn launch(&self, target: Option<Target>) {
        self.0.lock().unwrap().push(target);
        if let Some(tx) = &self.1 {
            let _ = tx.send(());
        }
    }
    fn quick_ask(&self, _capture: bool) {
        unreachable!("nothing in these tests presses the Quick Ask shortcut (the e2e test does, under X)")
    }
}

struct Tray(mpsc::UnboundedSender<Dashboard>);
impl TrayView for Tray {
    fn show(&self, dashboard: &Dashboard) {
        let _ = self.0.send(dashboard.clone());
    }
}

/// The tray's dashboards until one satisfies `pred`.
async fn tray_until(rx: &mut mpsc::UnboundedReceiver<Dashboard>, what: &str, pred: impl Fn(&Dashboard) -> bool) {
    let found = tokio::time::timeout(WAIT, async {
        while let Some(d) = rx.recv().await {
            if pred(&d) {
                return;
            }
        }
        panic!("the tray view was dropped");
    })
    .await;
    assert!(found.is_ok(), "the tray never showed {what}");
}

fn state_of(d: &Dashboard, p: &Profile) -> AgentState {
    d.agents.iter().find(|a| a.profile_id == p.id).map_or(AgentState::Offline, |a| a.state)
}

fn profile(app: &App, name: &str, url: &str) -> Profile {
    app.with_store(|s| s.profile_create(&NewProfile::adapter(name, url))).unwrap()
}

/// Two agents with their tokens, one with a wrong token, one without a token: the first two connected, each as
/// its own device (A-1: the cron job addresses the device id). A scheduled message to the second one is stored and
/// counted unread by the store, and raises exactly one notification, with the agent's name and generic text only,
/// leading to its conversation; the tray counts it and lists the conversation, whose entry starts the window process
/// on it. Muted from the tray, the next message raises none (still counted); unmuted, Show and Quit; Quit closes
/// every connection (the devserver sees them go).
/// The resident's loop on a task of its own, until the returned sender fires (or is dropped).
fn run_until_stopped(resident: &Resident) -> (tokio::sync::oneshot::Sender<()>, tokio::task::JoinHandle<()>) {
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let r = resident.clone();
    let running = tokio::spawn(async move {
        r.run(async {
            let _ = stop_rx.await;
        })
        .await
    });
    (stop_tx, running)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a1_a_scheduled_message_notifies_once_counts_and_opens_its_conversation_and_mute_silences_it() {
    let server = hermes_devserver::start(hermes_devserver::Config::fast()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let app = App::open(dir.path()).unwrap();
    let url = server.adapter_url();
    let lab = profile(&app, "Lab agent", &url);
    let second = profile(&app, "Second agent", &url);
    let denied = profile(&app, "Wrong token", &url);
    let tokenless = profile(&app, "No token", &url);
    let good = server.token().to_string();
    let (denied_id, tokenless_id) = (denied.id.clone(), tokenless.id.clone());
    let tokens = Arc::new(move |p: &Profile| {
        if p.id == tokenless_id {
            None
        } else if p.id == denied_id {
            Some(Secret::new("not the token"))
        } else {
            Some(Secret::new(good.clone()))
        }
    });
    let (note_tx, mut notes) = mpsc::unbounded_channel();
    let (launch_tx, mut launched) = mpsc::unbounded_channel();
    let windows = Arc::new(Windows(Mutex::default(), Some(launch_tx), Mutex::default()));
    let parts = Parts { app, tokens, notifier: Arc::new(Notes(note_tx)), launcher: windows.clone() };
    let resident = Resident::start(parts).await;
    let (tray_tx, mut tray) = mpsc::unbounded_channel();
    resident.set_tray(Box::new(Tray(tray_tx)));
    let (stop_tx, running) = run_until_stopped(&resident);

    let mut started = vec![lab.id.clone(), second.id.clone(), denied.id.clone()];
    started.sort();
    assert_eq!(resident.connected_profiles().await, started, "an engine per profile with a token");
    tray_until(&mut tray, "two agents connected and the wrong token offline", |d| {
        state_of(d, &lab) == AgentState::Connected
            && state_of(d, &second) == AgentState::Connected
            && state_of(d, &denied) == AgentState::Offline
            && d.agents.len() == 4
    })
    .await;
    assert_eq!(server.connections(), 2);
    assert_eq!(resident.hub().state(&tokenless.id), (AgentState::Offline, 0), "never started");
    assert_eq!(resident.dashboard().title(), None, "nothing unread");

    // a scheduled message to the second agent's device
    let job = server.schedule_to_device(&second.device_id, Duration::from_millis(100), "Stand-up in 5");
    let note = tokio::time::timeout(WAIT, notes.recv()).await.expect("a notification").unwrap();
    let conversation = resident.app().conversations(&second.id).unwrap()[0].id.clone();
    let target = Target { profile_id: second.id.clone(), conversation_id: conversation.clone() };
    assert_eq!(
        note,
        Note { title: "Second agent".into(), body: "New reply".into(), target: Some(target.clone()) },
        "the agent's name and generic text only, never what it wrote"
    );
    assert!(matches!(job.outcome().await, hermes_devserver::CronOutcome::Delivered { connections: 1 }));
    tray_until(&mut tray, "one unread", |d| d.total_unread() == 1).await;
    let d = resident.dashboard();
    assert_eq!(d.title().as_deref(), Some("1"));
    assert!(d.tooltip().contains("1 unread"), "{}", d.tooltip());
    let convs = resident.app().conversations(&second.id).unwrap();
    assert_eq!((convs[0].unread, convs[0].preview.as_deref()), (1, Some("Stand-up in 5")), "stored and counted");
    assert!(notes.try_recv().is_err(), "one notification");
    // (the hint before the notification: the launcher reads the window process's files ahead while the user reads it)
    assert_eq!(windows.2.lock().unwrap().as_slice(), [ShowHint::Notified], "a click on it may follow");

    // the host opens the tray's menu: another hint
    resident.clicks().send(hermes_resident::resident::MENU_OPENED.into()).unwrap();

    // the tray's entry for the conversation starts the window process on it
    let open = d
        .items()
        .into_iter()
        .find_map(|i| match i {
            TrayItem::Item { id, label, enabled: true } if label.starts_with("Second agent:") => Some(id),
            _ => None,
        })
        .expect("the conversation listed in the tray");
    resident.clicks().send(open).unwrap();
    tokio::time::timeout(WAIT, launched.recv()).await.expect("a window process").unwrap();
    assert_eq!(windows.0.lock().unwrap().as_slice(), [Some(target)]);
    // (the loop takes the tray's sends in order: the menu's hint before the click)
    assert_eq!(windows.2.lock().unwrap().as_slice(), [ShowHint::Notified, ShowHint::MenuOpened]);

    // muted from the tray: saved in the settings, the next message counts but raises nothing
    resident.clicks().send("mute".into()).unwrap();
    tray_until(&mut tray, "muted", |d| d.muted).await;
    assert!(AppSettings::load(dir.path()).mute_until > hermes_app::hub::now_ms());
    server.schedule_to_device(&lab.device_id, Duration::from_millis(50), "while muted");
    tray_until(&mut tray, "two unread", |d| d.total_unread() == 2).await;
    assert!(notes.try_recv().is_err(), "no notification while muted");
    assert_eq!(windows.2.lock().unwrap().len(), 2, "nor a hint: nothing to click");
    resident.clicks().send("unmute".into()).unwrap();
    tray_until(&mut tray, "unmuted", |d| !d.muted).await;
    assert_eq!(AppSettings::load(dir.path()).mute_until, 0);

    // Show, then Quit: every connection closed
    resident.clicks().send("show".into()).unwrap();
    tokio::time::timeout(WAIT, launched.recv()).await.expect("a window process").unwrap();
    assert_eq!(windows.0.lock().unwrap().last(), Some(&None), "Show starts the window process on nothing");
    resident.clicks().send("quit".into()).unwrap();
    tokio::time::timeout(WAIT, running).await.expect("Quit ends the resident").unwrap();
    drop(stop_tx);
    assert!(resident.connected_profiles().await.is_empty());
    assert_eq!(resident.hub().state(&lab.id).0, AgentState::Offline);
    let closed = tokio::time::timeout(WAIT, async {
        while server.connections() > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(closed.is_ok(), "the devserver still sees {} connections", server.connections());
    server.shutdown().await;
}

/// The stop signal (SIGTERM/SIGINT in the binary) shuts every engine down; a resident with no profile runs too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stop_signal_closes_every_connection() {
    let server = hermes_devserver::start(hermes_devserver::Config::fast()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let app = App::open(dir.path()).unwrap();
    let lab = profile(&app, "Lab agent", &server.adapter_url());
    let token = server.token().to_string();
    let (note_tx, _notes) = mpsc::unbounded_channel();
    let parts = Parts {
        app,
        tokens: Arc::new(move |_: &Profile| Some(Secret::new(token.clone()))),
        notifier: Arc::new(Notes(note_tx)),
        launcher: Arc::new(Windows::default()),
    };
    let resident = Resident::start(parts).await;
    let (tray_tx, mut tray) = mpsc::unbounded_channel();
    resident.set_tray(Box::new(Tray(tray_tx)));
    tray_until(&mut tray, "connected", |d| state_of(d, &lab) == AgentState::Connected).await;
    assert_eq!(server.connections(), 1);
    let (stop_tx, running) = run_until_stopped(&resident);
    stop_tx.send(()).unwrap();
    tokio::time::timeout(WAIT, running).await.expect("the stop ends the resident").unwrap();
    let closed = tokio::time::timeout(WAIT, async {
        while server.connections() > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(closed.is_ok(), "the connection was not closed");
    server.shutdown().await;

    let empty = tempfile::tempdir().unwrap();
    let (note_tx, _notes) = mpsc::unbounded_channel();
    let parts = Parts {
        app: App::open(empty.path()).unwrap(),
        tokens: Arc::new(|_: &Profile| None),
        notifier: Arc::new(Notes(note_tx)),
        launcher: Arc::new(Windows::default()),
    };
    let resident = Resident::start(parts).await;
    assert!(resident.connected_profiles().await.is_empty());
    assert_eq!(resident.dashboard().tooltip(), "Hermes — no agent");
    resident.run(async {}).await;
}
