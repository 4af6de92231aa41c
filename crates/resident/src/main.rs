//! `hermes-resident --data-dir D --log-dir L --app <window process>`: see the library's documentation. Exit codes:
//! 0 (ended by SIGTERM/SIGINT or the tray's Quit, or another resident already runs), 1 (cannot start), 2 (usage).

use std::io::Write as _;
use std::process::ExitCode;

use hermes_resident::args::Args;

fn main() -> ExitCode {
    let args = match Args::parse(std::env::args_os().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "{e}");
            return ExitCode::from(2);
        }
    };
    run(args)
}

#[cfg(not(target_os = "linux"))]
fn run(_: Args) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "hermes-resident: only on Linux (elsewhere the app keeps its connections)");
    ExitCode::FAILURE
}

#[cfg(target_os = "linux")]
fn run(args: Args) -> ExitCode {
    hermes_resident::logfile::init(&args.log_dir);
    let held = match hermes_app::resident::try_hold(&args.data_dir) {
        Ok(Some(held)) => held,
        Ok(None) => {
            let _ = writeln!(std::io::stderr(), "hermes-resident: already running");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            tracing::error!("cannot take the resident's lock in {}: {e}", args.data_dir.display());
            let _ = writeln!(std::io::stderr(), "hermes-resident: cannot take its lock: {e}");
            return ExitCode::FAILURE;
        }
    };
    let app = match hermes_app::App::open(&args.data_dir) {
        Ok(app) => app,
        Err(e) => {
            tracing::error!("cannot open the store: {e}");
            let _ = writeln!(std::io::stderr(), "hermes-resident: cannot open the store: {e}");
            return ExitCode::FAILURE;
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!("no async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    tracing::info!(pid = std::process::id(), "resident started");
    let code = rt.block_on(linux::serve(args, app));
    // the connections are closed: only now may a window process connect (it waits for this lock)
    drop(held);
    tracing::info!("resident ended");
    code
}

#[cfg(target_os = "linux")]
mod linux {
    use std::io::Write as _;
    use std::process::ExitCode;
    use std::sync::Arc;

    use hermes_client::Secret;
    use hermes_resident::args::Args;
    use hermes_resident::desktop::DesktopNotifier;
    use hermes_resident::{Launcher, Parts, Resident, WindowLauncher};
    use hermes_store::Profile;
    use tokio::signal::unix::{SignalKind, signal};

    /// A profile's token from the keychain (only for a profile that has one there).
    fn keychain_token(p: &Profile) -> Option<Secret> {
        if !p.has_token || std::env::var_os("HERMES_NO_KEYCHAIN").is_some() {
            return None;
        }
        match hermes_client::keychain::get(&p.id) {
            Ok(token) => token,
            Err(e) => {
                tracing::warn!(profile = %p.id, code = e.code(), "no token from the keychain: {e}");
                None
            }
        }
    }

    /// The ready line on stdout, then stdout pointed at /dev/null: the window process that reads the line exits, and
    /// nothing this process does later may write into (or fail on) its pipe.
    fn announce_ready() {
        let mut out = std::io::stdout().lock();
        let written = writeln!(out, "{}", hermes_app::resident::READY_LINE).and_then(|()| out.flush());
        if let Err(e) = written {
            tracing::warn!("cannot write the ready line: {e}");
        }
        match std::fs::OpenOptions::new().write(true).open("/dev/null") {
            Ok(null) => {
                if let Err(e) = rustix::stdio::dup2_stdout(&null) {
                    tracing::warn!("cannot close stdout: {e}");
                }
            }
            Err(e) => tracing::warn!("cannot open /dev/null: {e}"),
        }
    }

    pub async fn serve(args: Args, app: hermes_app::App) -> ExitCode {
        // before anything connects: a window process's take-over may come at any moment from the ready line on
        let (mut term, mut int) = match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
            (Ok(t), Ok(i)) => (t, i),
            (Err(e), _) | (_, Err(e)) => {
                tracing::error!("cannot handle signals: {e}");
                return ExitCode::FAILURE;
            }
        };
        let window = Arc::new(WindowLauncher::new(args.app.clone(), args.data_dir.clone(), args.log_dir.clone()));
        let launcher: Arc<dyn Launcher> = window.clone();
        // the Quick Ask and capture shortcuts, kept for as long as this serves
        let settings = hermes_app::settings::AppSettings::load(&args.data_dir);
        let _quick_ask = hermes_resident::hotkey::start(
            settings.quick_ask_shortcut.as_deref(),
            settings.capture_shortcut.as_deref(),
            launcher.clone(),
        );
        let notifier = Arc::new(DesktopNotifier::new(launcher.clone()));
        let parts = Parts { app, tokens: Arc::new(keychain_token), notifier, launcher };
        let resident = Resident::start(parts).await;
        tracing::info!(agents = resident.connected_profiles().await.len(), "engines started");
        announce_ready();
        if let Some(tray) = hermes_resident::tray::start(resident.clicks()).await {
            resident.set_tray(Box::new(tray));
        }
        resident.watch_network();
        // the next Show's window process, loaded ahead (a blocking spawn: off the runtime's threads)
        let standby = tokio::task::spawn_blocking(move || window.prepare_standby());
        if let Err(e) = standby.await {
            tracing::warn!("cannot prepare a window process on standby: {e}");
        }
        let stop = async {
            tokio::select! {
                _ = term.recv() => tracing::info!("SIGTERM: closing the connections"),
                _ = int.recv() => tracing::info!("SIGINT: closing the connections"),
            }
        };
        resident.run(stop).await;
        ExitCode::SUCCESS
    }
}
