//! The resident process (Linux): while the desktop app's window process is gone (hidden in the tray past its timeout,
//! or started hidden at login), this small process keeps every agent connected, raises the notifications and shows the
//! tray. It links neither GTK nor WebKit, so a hidden app costs a fraction of the memory.
//!
//! The hand-over (see `hermes_app::resident`): the window process stops its engines and starts
//! `hermes-resident --data-dir D --log-dir L --app <window process>`; the resident takes the lock in `D`, starts one
//! engine per profile whose token is in the keychain, prints `READY_LINE` and closes its stdout; the window process
//! then exits. A window process that starts (Show, a notification's click, a tray conversation, the user) sends the
//! resident SIGTERM through `take_over`: the resident closes its connections, frees the lock and exits.
//!
//! The parts are injected so the logic runs in-process in tests: the token source, the [`Notifier`], the
//! [`Launcher`] of window processes and the tray ([`TrayView`], optional: a desktop without a tray host has none).

pub mod args;
#[cfg(target_os = "linux")]
pub mod desktop;
#[cfg(target_os = "linux")]
pub mod hotkey;
pub mod icon;
pub mod launcher;
pub mod logfile;
pub mod resident;
#[cfg(target_os = "linux")]
pub mod tray;

pub use launcher::WindowLauncher;
pub use resident::{Flow, Launcher, Note, Notifier, Parts, Resident, ShowHint, Target, TokenSource, TrayView};
