//! "The network is back" / "the machine woke up", from the OS: the engine then reconnects at once instead of
//! waiting out its backoff (up to 30 s).
//!
//! - Linux: the system D-Bus. NetworkManager's `StateChanged(u32)` going from a non-connected state to a connected one
//!   (50 local, 60 site, 70 global), and systemd-logind's `PrepareForSleep(false)` (the machine resumed). The bus is
//!   the one `DBUS_SYSTEM_BUS_ADDRESS` names (else the standard socket); [`start_on_bus`] takes an explicit address.
//! - macOS and Windows: new interface addresses, from the `if-watch` crate (SystemConfiguration's dynamic store on
//!   macOS, `NotifyIpInterfaceChange` on Windows). No kept crate gives their resume notifications: a wake without an
//!   address change is noticed by the engine's own heartbeat and backoff instead.
//!
//! No bus, or neither service on it, means no watcher: a debug log line, never an error for the user. A burst of
//! signals (resume, then the network's state climbing 40 → 60 → 70) becomes one wake-up.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Signals that arrive within this long of the first one of a burst become one wake-up, sent at its end.
pub const DEBOUNCE: Duration = Duration::from_secs(1);

/// Why the OS says it is worth trying now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// A connection came up (NetworkManager reached a connected state; a new address elsewhere).
    NetworkUp,
    /// The machine resumed from sleep (logind `PrepareForSleep(false)`).
    Resumed,
}

/// One debounced wake-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wake {
    /// What started the burst.
    pub reason: Reason,
    /// How many signals the burst held (1 when alone).
    pub signals: u32,
}

/// A running watcher. Dropping it stops listening.
#[derive(Debug)]
pub struct Watcher {
    rx: mpsc::Receiver<Wake>,
    tasks: Vec<JoinHandle<()>>,
}

impl Watcher {
    /// The next wake-up; `None` once the source went away (the bus connection closed). Cancel-safe.
    pub async fn next(&mut self) -> Option<Wake> {
        self.rx.recv().await
    }

    /// Start debouncing the raw signals that `source` (a task holding the sender) produces.
    fn new(raw: mpsc::Receiver<Reason>, source: JoinHandle<()>) -> Watcher {
        let (tx, rx) = mpsc::channel(4);
        let debounce = tokio::spawn(debounce(raw, tx));
        Watcher { rx, tasks: vec![source, debounce] }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// The next wake-up of an optional watcher; never returns when there is none (or it ended), so that it can sit in a
/// `select!` beside the real work.
pub async fn next_wake(watcher: &mut Option<Watcher>) -> Wake {
    if let Some(w) = watcher {
        if let Some(wake) = w.next().await {
            return wake;
        }
        *watcher = None;
    }
    std::future::pending().await
}

/// Watch what this OS offers; `None` when it offers nothing usable here (logged at debug level).
pub async fn start() -> Option<Watcher> {
    #[cfg(target_os = "linux")]
    {
        linux::start(None).await
    }
    #[cfg(any(target_os = "macos", target_os = "windows"))]
    {
        addresses::start()
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos", target_os = "windows")))]
    {
        tracing::debug!("no network/resume notifications on this OS: reconnects follow the backoff only");
        None
    }
}

/// Linux: watch NetworkManager and logind on the bus at `address` (a D-Bus address, `unix:path=…`).
#[cfg(target_os = "linux")]
pub async fn start_on_bus(address: &str) -> Option<Watcher> {
    linux::start(Some(address)).await
}

async fn debounce(mut raw: mpsc::Receiver<Reason>, out: mpsc::Sender<Wake>) {
    while let Some(reason) = raw.recv().await {
        let mut signals = 1;
        let window = tokio::time::sleep(DEBOUNCE);
        tokio::pin!(window);
        loop {
            tokio::select! {
                _ = &mut window => break,
                more = raw.recv() => match more {
                    Some(_) => signals += 1,
                    None => break,
                },
            }
        }
        tracing::info!(?reason, signals, "the OS says the network is back or the machine woke: reconnecting now");
        if out.send(Wake { reason, signals }).await.is_err() {
            return;
        }
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use futures_util::StreamExt;
    use futures_util::stream::BoxStream;
    use tokio::sync::mpsc;
    use zbus::proxy::CacheProperties;

    use super::{Reason, Watcher};

    const NM: &str = "org.freedesktop.NetworkManager";
    const NM_PATH: &str = "/org/freedesktop/NetworkManager";
    const LOGIN: &str = "org.freedesktop.login1";
    const LOGIN_PATH: &str = "/org/freedesktop/login1";
    const LOGIN_MANAGER: &str = "org.freedesktop.login1.Manager";
    /// NM_STATE_CONNECTED_LOCAL; 60 is SITE, 70 GLOBAL. Local counts: a self-hosted agent may be on the LAN.
    const NM_CONNECTED: u32 = 50;

    enum Signal {
        NetworkState(u32),
        PrepareForSleep(bool),
    }

    pub(super) async fn start(address: Option<&str>) -> Option<Watcher> {
        let connect = async {
            match address {
                Some(a) => zbus::connection::Builder::address(a)?.build().await,
                None => zbus::Connection::system().await,
            }
        };
        let conn = match tokio::time::timeout(std::time::Duration::from_secs(5), connect).await {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "no system bus: no network/resume notifications");
                return None;
            }
            Err(_) => {
                tracing::debug!("the system bus did not answer: no network/resume notifications");
                return None;
            }
        };
        let dbus = zbus::fdo::DBusProxy::new(&conn).await.ok()?;
        let mut streams: Vec<BoxStream<'static, Signal>> = Vec::new();
        let mut connected = false;

        if owned(&dbus, NM).await {
            match proxy(&conn, NM, NM_PATH, NM).await {
                Ok(p) => {
                    // A connected state at start is not news; unknown counts as "not connected" (one extra
                    // reconnect is harmless: a connected engine ignores it).
                    connected = p.get_property::<u32>("State").await.is_ok_and(|s| s >= NM_CONNECTED);
                    match p.receive_signal("StateChanged").await {
                        Ok(s) => streams.push(
                            s.filter_map(
                                |m| async move { m.body().deserialize::<u32>().ok().map(Signal::NetworkState) },
                            )
                            .boxed(),
                        ),
                        Err(e) => tracing::debug!(error = %e, "cannot listen to NetworkManager"),
                    }
                }
                Err(e) => tracing::debug!(error = %e, "cannot listen to NetworkManager"),
            }
        } else {
            tracing::debug!("NetworkManager is not on the system bus: no network-up notifications");
        }

        if owned(&dbus, LOGIN).await {
            match proxy(&conn, LOGIN, LOGIN_PATH, LOGIN_MANAGER).await {
                Ok(p) => match p.receive_signal("PrepareForSleep").await {
                    Ok(s) => streams.push(
                        s.filter_map(
                            |m| async move { m.body().deserialize::<bool>().ok().map(Signal::PrepareForSleep) },
                        )
                        .boxed(),
                    ),
                    Err(e) => tracing::debug!(error = %e, "cannot listen to logind"),
                },
                Err(e) => tracing::debug!(error = %e, "cannot listen to logind"),
            }
        } else {
            tracing::debug!("logind is not on the system bus: no resume notifications");
        }

        if streams.is_empty() {
            return None;
        }
        let (tx, rx) = mpsc::channel(16);
        let source = tokio::spawn(async move {
            let _conn = conn; // the streams live as long as the connection
            let mut all = futures_util::stream::select_all(streams);
            while let Some(sig) = all.next().await {
                let reason = match sig {
                    Signal::NetworkState(state) => {
                        let was = std::mem::replace(&mut connected, state >= NM_CONNECTED);
                        (connected && !was).then_some(Reason::NetworkUp)
                    }
                    Signal::PrepareForSleep(going_to_sleep) => (!going_to_sleep).then_some(Reason::Resumed),
                };
                if let Some(r) = reason
                    && tx.send(r).await.is_err()
                {
                    return;
                }
            }
        });
        Some(Watcher::new(rx, source))
    }

    async fn owned(dbus: &zbus::fdo::DBusProxy<'_>, name: &'static str) -> bool {
        match zbus::names::BusName::try_from(name) {
            Ok(n) => dbus.name_has_owner(n).await.unwrap_or(false),
            Err(_) => false,
        }
    }

    async fn proxy(
        conn: &zbus::Connection,
        dest: &'static str,
        path: &'static str,
        iface: &'static str,
    ) -> zbus::Result<zbus::Proxy<'static>> {
        zbus::proxy::Builder::new(conn)
            .destination(dest)?
            .path(path)?
            .interface(iface)?
            .cache_properties(CacheProperties::No)
            .build()
            .await
    }
}

#[cfg(any(target_os = "macos", target_os = "windows"))]
mod addresses {
    use futures_util::{FutureExt, StreamExt};
    use tokio::sync::mpsc;

    use super::{Reason, Watcher};

    pub(super) fn start() -> Option<Watcher> {
        let mut w = match if_watch::tokio::IfWatcher::new() {
            Ok(w) => w,
            Err(e) => {
                tracing::debug!(error = %e, "no address-change notifications: reconnects follow the backoff only");
                return None;
            }
        };
        let (tx, rx) = mpsc::channel(16);
        let source = tokio::spawn(async move {
            // The first poll lists the addresses already there: not news.
            while let Some(Some(Ok(_))) = w.next().now_or_never() {}
            while let Some(ev) = w.next().await {
                match ev {
                    Ok(if_watch::IfEvent::Up(net)) if !net.addr().is_loopback() => {
                        if tx.send(Reason::NetworkUp).await.is_err() {
                            return;
                        }
                    }
                    Ok(_) => {}
                    Err(e) => {
                        tracing::debug!(error = %e, "address-change notifications stopped");
                        return;
                    }
                }
            }
        });
        Some(Watcher::new(rx, source))
    }
}
