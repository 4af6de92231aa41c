//! "the network is back" / "the machine woke" from the OS, heard on a private D-Bus daemon where a stand-in
//! NetworkManager and logind (zbus, owning the real names, emitting the real signals) play the system's part; then
//! an engine that waits out a long backoff reconnects at once on a resume.
#![cfg(target_os = "linux")]

mod common;
mod standin;

use std::time::Duration;

use common::*;
use hermes_client::netwatch::{self, Reason, Wake, Watcher};
use hermes_devserver::Config as ServerConfig;
use hermes_protocol::{Command, Dialect, Event};
use standin::*;

async fn next(w: &mut Watcher) -> Wake {
    tokio::time::timeout(Duration::from_secs(10), w.next())
        .await
        .expect("a wake-up within 10 s")
        .expect("the watcher is running")
}

async fn watcher(bus: &Bus) -> Watcher {
    netwatch::start_on_bus(&bus.address).await.expect("a watcher: both services are on the bus")
}

#[tokio::test]
async fn a5_resume_wakes_and_going_to_sleep_does_not() {
    let Some(bus) = bus() else { return };
    let sys = StandIn::start(&bus, Some(CONNECTED_GLOBAL), true).await;
    let mut w = watcher(&bus).await;
    // Going to sleep, then waking: one signal counts, and it is the resume (were "going to sleep" a wake-up, the two
    // would make one burst of two signals).
    sys.prepare_for_sleep(true).await;
    sys.prepare_for_sleep(false).await;
    assert_eq!(next(&mut w).await, Wake { reason: Reason::Resumed, signals: 1 });
    // and again, in a burst of its own
    sys.prepare_for_sleep(true).await;
    sys.prepare_for_sleep(false).await;
    assert_eq!(next(&mut w).await, Wake { reason: Reason::Resumed, signals: 1 });
}

#[tokio::test]
async fn a5_network_up_wakes_and_connected_to_connected_does_not() {
    let Some(bus) = bus() else { return };
    // Connected at start (the `State` property): a change between connected states is not news.
    let sys = StandIn::start(&bus, Some(CONNECTED_GLOBAL), true).await;
    let mut w = watcher(&bus).await;
    sys.network_state(CONNECTED_SITE).await; // connected → connected
    sys.network_state(CONNECTED_GLOBAL).await; // connected → connected
    sys.network_state(DISCONNECTED).await; // down
    sys.network_state(CONNECTING).await; // still down
    sys.network_state(CONNECTED_SITE).await; // up: the only signal that counts
    assert_eq!(next(&mut w).await, Wake { reason: Reason::NetworkUp, signals: 1 });
    sys.network_state(DISCONNECTED).await;
    sys.network_state(CONNECTED_GLOBAL).await;
    assert_eq!(next(&mut w).await, Wake { reason: Reason::NetworkUp, signals: 1 });
}

#[tokio::test]
async fn a5_network_up_from_a_disconnected_start_wakes() {
    let Some(bus) = bus() else { return };
    let sys = StandIn::start(&bus, Some(DISCONNECTED), true).await;
    let mut w = watcher(&bus).await;
    sys.network_state(CONNECTED_GLOBAL).await;
    assert_eq!(next(&mut w).await, Wake { reason: Reason::NetworkUp, signals: 1 });
}

#[tokio::test]
async fn a5_a_burst_of_signals_is_one_wake_up() {
    let Some(bus) = bus() else { return };
    let sys = StandIn::start(&bus, Some(DISCONNECTED), true).await;
    let mut w = watcher(&bus).await;
    // A resume as it happens: logind says "woke", the network goes down and comes back up, twice.
    sys.prepare_for_sleep(false).await;
    sys.network_state(CONNECTED_GLOBAL).await;
    sys.network_state(DISCONNECTED).await;
    sys.network_state(CONNECTED_SITE).await;
    let wake = next(&mut w).await;
    assert_eq!(wake.signals, 3, "{wake:?}");
    // Nothing of that burst is left over: the next wake-up is the next signal's, alone.
    sys.network_state(DISCONNECTED).await;
    sys.network_state(CONNECTED_GLOBAL).await;
    assert_eq!(next(&mut w).await, Wake { reason: Reason::NetworkUp, signals: 1 });
}

#[tokio::test]
async fn a5_no_bus_or_no_service_is_no_watcher_and_one_service_is_enough() {
    assert!(netwatch::start_on_bus("unix:path=/nonexistent/hermes-test-bus").await.is_none());
    assert!(netwatch::start_on_bus("not a bus address").await.is_none());
    let Some(bus) = bus() else { return };
    assert!(netwatch::start_on_bus(&bus.address).await.is_none(), "neither service on the bus: no watcher");
    // logind alone (a machine without NetworkManager): resumes still count
    let sys = StandIn::start(&bus, None, true).await;
    let mut w = watcher(&bus).await;
    sys.prepare_for_sleep(false).await;
    assert_eq!(next(&mut w).await, Wake { reason: Reason::Resumed, signals: 1 });
}

#[tokio::test]
async fn a5_a_resume_reconnects_at_once_instead_of_waiting_out_the_backoff() {
    let Some(bus) = bus() else { return };
    let sys = StandIn::start(&bus, Some(CONNECTED_GLOBAL), true).await;
    let mut w = watcher(&bus).await;
    let srv = hermes_devserver::start(ServerConfig::fast()).await.expect("devserver");
    let addr = srv.addr();
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&srv.adapter_url(), Dialect::Adapter, srv.token(), "desktop-netwatch", dir.path()));
    c.ready().await;

    // The agent goes away; failed attempts grow the backoff (1, 2, 4, 8 s ± 20 %) until the next try is ≥ 6 s off.
    srv.shutdown().await;
    let retry_in =
        match c.wait(30, |e| matches!(e, Event::Disconnected { retry_in_ms: Some(ms), .. } if *ms >= 6000)).await {
            Event::Disconnected { retry_in_ms: Some(ms), .. } => Duration::from_millis(ms),
            _ => unreachable!(),
        };
    // The engine's own next try, at the earliest.
    let own_retry = tokio::time::Instant::now() + retry_in;
    let _srv2 = hermes_devserver::start(ServerConfig { bind: addr, ..ServerConfig::fast() }).await.unwrap();

    // The machine wakes; the wake-up goes to the engine as the app and the CLI send it.
    sys.prepare_for_sleep(false).await;
    let wake = next(&mut w).await;
    assert_eq!(wake.reason, Reason::Resumed);
    c.handle.send(Command::Reconnect).await.unwrap();

    // What follows is a new attempt that reaches `ready`, and it comes before the engine would have tried by itself
    // (had the wake-up done nothing, the first event after it would come at `own_retry`).
    let mut after = Vec::new();
    loop {
        let ev = tokio::time::timeout_at(own_retry, c.events.recv())
            .await
            .unwrap_or_else(|_| {
                panic!("no reconnect before the backoff's own retry; events since the wake: {after:#?}")
            })
            .expect("engine running");
        let ready = matches!(ev, Event::Ready { .. });
        after.push(ev);
        if ready {
            break;
        }
    }
    assert!(matches!(after.first(), Some(Event::Connecting { .. })), "a new attempt first: {after:#?}");
    assert!(!after.iter().any(|e| matches!(e, Event::Disconnected { .. })), "that attempt went through: {after:#?}");
    c.text("after the wake").await;
    assert!(c.final_reply().await.contains("after the wake"));
}
