#![allow(dead_code)]
//! The system's side of D-Bus, played in tests: a private `dbus-daemon`, and a stand-in NetworkManager and logind
//! (zbus, owning the real names, emitting the real signals). Shared by the client's and the CLI's netwatch tests.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command as Process, Stdio};

pub const NM: &str = "org.freedesktop.NetworkManager";
pub const NM_PATH: &str = "/org/freedesktop/NetworkManager";
pub const LOGIN: &str = "org.freedesktop.login1";
pub const LOGIN_PATH: &str = "/org/freedesktop/login1";
pub const LOGIN_MANAGER: &str = "org.freedesktop.login1.Manager";

/// NetworkManager's states (NMState).
pub const DISCONNECTED: u32 = 20;
pub const CONNECTING: u32 = 40;
pub const CONNECTED_SITE: u32 = 60;
pub const CONNECTED_GLOBAL: u32 = 70;

/// A private bus: `dbus-daemon` on a socket in a temporary folder, stopped on drop.
pub struct Bus {
    child: Child,
    pub address: String,
    _dir: tempfile::TempDir,
}

impl Drop for Bus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The bus, or `None` (the test is skipped, with a message) where `dbus-daemon` is not installed — except in CI,
/// where its absence is a failure: `cargo xtask deps` installs it (Debian package `dbus`).
pub fn bus() -> Option<Bus> {
    if Process::new("dbus-daemon").arg("--version").output().is_err() {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("dbus-daemon is missing (Debian package `dbus`; `cargo xtask deps` installs it)");
        }
        eprintln!("SKIPPED: dbus-daemon is not installed (Debian package `dbus`; `cargo xtask deps`)");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    // The session configuration lets anyone own any name: the stand-in takes the system services' names.
    let mut child = Process::new("dbus-daemon")
        .args(["--session", "--nofork", "--nopidfile", "--print-address"])
        .arg(format!("--address=unix:path={}", dir.path().join("bus").display()))
        .stdout(Stdio::piped())
        // it complains that it cannot raise its fd limit when not run by the system
        .stderr(Stdio::null())
        .spawn()
        .expect("dbus-daemon starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).expect("dbus-daemon prints its address");
    let address = line.trim().to_string();
    assert!(address.starts_with("unix:"), "dbus-daemon's address: {address:?}");
    Some(Bus { child, address, _dir: dir })
}

/// NetworkManager's `State` property, read by the watcher at start.
struct NetworkManager {
    state: u32,
}

#[zbus::interface(name = "org.freedesktop.NetworkManager")]
impl NetworkManager {
    #[zbus(property)]
    fn state(&self) -> u32 {
        self.state
    }
}

/// The system's services, played on the private bus.
pub struct StandIn {
    conn: zbus::Connection,
}

impl StandIn {
    /// NetworkManager (in `nm_state`) when given, logind when `login`.
    pub async fn start(bus: &Bus, nm_state: Option<u32>, login: bool) -> StandIn {
        let mut b = zbus::connection::Builder::address(bus.address.as_str()).unwrap();
        if let Some(state) = nm_state {
            b = b.serve_at(NM_PATH, NetworkManager { state }).unwrap().name(NM).unwrap();
        }
        if login {
            b = b.name(LOGIN).unwrap();
        }
        StandIn { conn: b.build().await.expect("the stand-in joins the bus") }
    }

    pub async fn network_state(&self, state: u32) {
        self.conn.emit_signal(None::<&str>, NM_PATH, NM, "StateChanged", &state).await.unwrap();
    }

    pub async fn prepare_for_sleep(&self, going_to_sleep: bool) {
        self.conn
            .emit_signal(None::<&str>, LOGIN_PATH, LOGIN_MANAGER, "PrepareForSleep", &going_to_sleep)
            .await
            .unwrap();
    }
}
