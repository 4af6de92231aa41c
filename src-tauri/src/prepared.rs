//! A start prepared ahead of the user's pick (Linux: the resident wakes its standby as the tray's menu opens,
//! `hermes_app::resident::PREPARED_FLAG`). The process starts as for a Show — the store, the main window built hidden,
//! WebKit's web process, the page loaded and rendered — but takes nothing of the resident's: the agents' connections,
//! the tray and the global shortcuts stay with it, and the window stays off screen. The command line the user then
//! picks (Show, a conversation) arrives on stdin (standby.rs); only then does this process take the connections over
//! (`handover::wait_for_resident`), put up its tray and show the window. End of file first (nothing picked: the
//! resident ended the wait): the process ends, having changed nothing.

use tauri::{AppHandle, Manager};

use crate::Options;

/// Managed state: whether this start still waits for its pick (false for every start that was not prepared).
pub struct Prepared(tokio::sync::watch::Sender<bool>);

impl Prepared {
    pub fn new(waiting: bool) -> Prepared {
        Prepared(tokio::sync::watch::channel(!waiting).0)
    }

    /// Waits until the start is no longer waiting for its pick (at once for a start that was not prepared).
    pub async fn wait(&self) {
        let mut rx = self.0.subscribe();
        let _ = rx.wait_for(|picked| *picked).await;
    }

    pub fn waiting(&self) -> bool {
        !*self.0.borrow()
    }
}

/// Waits, off the main thread, for the pick the resident writes (standby.rs), then carries it out on the main thread;
/// nothing picked: the process ends.
pub fn wait_for_pick(app: &AppHandle) {
    #[cfg(target_os = "linux")]
    let go = crate::standby::take_go();
    #[cfg(not(target_os = "linux"))]
    let go: Option<std::sync::mpsc::Receiver<Option<Vec<String>>>> = None;
    let Some(go) = go else {
        // (not started by a resident: nothing will pick, so this is the Show)
        tracing::warn!("a prepared start with nothing to wait for: shown now");
        carry_out(app, &Options::default());
        return;
    };
    let owned = app.clone();
    let waiter = std::thread::Builder::new().name("hermes-pick".into()).spawn(move || {
        let pick = go.recv().ok().flatten();
        let handle = owned.clone();
        let ran = owned.run_on_main_thread(move || match pick {
            Some(args) => carry_out(&handle, &Options::from_args(&args)),
            // (a second start may have picked first: then the resident's end is only the hand-over)
            None if handle.try_state::<Prepared>().is_some_and(|p| p.waiting()) => {
                tracing::info!("nothing was picked in the tray's menu: the prepared window process ends");
                crate::window::quit(&handle);
            }
            None => {}
        });
        if ran.is_err() {
            tracing::warn!("the prepared window's pick came after the main thread ended");
        }
    });
    if let Err(e) = waiter {
        tracing::warn!("no thread to wait for the prepared window's pick ({e}): shown now");
        carry_out(app, &Options::default());
    }
}

/// The pick `o` taken ([`picked`]) and opened as it asks. Main thread.
fn carry_out(app: &AppHandle, o: &Options) {
    picked(app, o);
    crate::open_as_asked(app, o);
}

/// The user picked what this prepared start is for (`o`: the resident's pick, or a second start's command line): the
/// connections are taken over and the shortcuts registered (both wait for this), the tray put up, and the window shown
/// once its page has rendered — unless `o` asks for the Quick Ask panel alone, which leaves the main window hidden in
/// the tray. Nothing for a start that does not wait. Main thread.
pub fn picked(app: &AppHandle, o: &Options) {
    let Some(p) = app.try_state::<Prepared>() else { return };
    if !p.0.send_replace(true) {
        tracing::info!(
            since_start_ms = crate::since_start_ms(),
            "the prepared window was picked: taking the connections over"
        );
        crate::tray::install_soon(app);
        if o.quick && o.open.is_none() {
            crate::window::started_hidden(app);
        } else {
            crate::window::show_when_rendered(app);
        }
    }
}
