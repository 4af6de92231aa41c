//! A message queued in the durable outbox survives a restart of the process and is delivered exactly once.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use hermes_client::StorePersist;
use hermes_devserver::{Config as ServerConfig, LogItem};
use hermes_protocol::{Dialect, Event};
use hermes_store::{NewProfile, Store};

#[tokio::test]
async fn a6_queued_offline_then_restarted_is_delivered_once() {
    let probe = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = probe.local_addr().unwrap();
    drop(probe);
    let dir = tempfile::tempdir().unwrap();
    let url = format!("ws://{addr}/ws");
    let open = || {
        let store = Store::open_in(dir.path()).unwrap();
        let profile = match store.profiles().unwrap().into_iter().next() {
            Some(p) => p,
            None => store
                .profile_create(&NewProfile {
                    name: "test".into(),
                    url: url.clone(),
                    dialect: hermes_store::Dialect::Adapter,
                    v3_user_id: None,
                    allow_insecure_ws: false,
                    avatar_url: None,
                })
                .unwrap(),
        };
        let conv = store.conversation_for_adapter(&profile.id).unwrap();
        (Arc::new(Mutex::new(store)), profile, conv)
    };

    // first run: the agent is down; two messages are queued, then the app quits
    let (store, profile, conv) = open();
    let persist = StorePersist::new(store.clone(), &profile.id, &conv.id, &dir.path().join("media"));
    let mut c = start_with(
        config(&url, Dialect::Adapter, hermes_devserver::DEV_TOKEN, &profile.device_id, dir.path()),
        Box::new(persist),
    );
    c.wait(5, |e| matches!(e, Event::Disconnected { .. })).await;
    let a = c.text("queued while offline 1").await;
    let b = c.text("queued while offline 2").await;
    c.handle.shutdown().await;
    {
        let s = store.lock().unwrap();
        assert_eq!(s.outbox_pending(&profile.id).unwrap().len(), 2);
        let page = s.page(&conv.id, None, 10).unwrap();
        assert_eq!(page.messages.len(), 2, "the local echo is in history before anything was sent");
    }
    drop(store);

    // second run: the agent is up; the queue goes out once, in order, and is confirmed in the store
    let srv = hermes_devserver::start(ServerConfig { bind: addr, demo: false, ..ServerConfig::fast() }).await.unwrap();
    let (store, profile, conv) = open();
    let persist = StorePersist::new(store.clone(), &profile.id, &conv.id, &dir.path().join("media"));
    let mut c = start_with(
        config(&url, Dialect::Adapter, hermes_devserver::DEV_TOKEN, &profile.device_id, dir.path()),
        Box::new(persist),
    );
    c.wait(10, |e| matches!(e, Event::Delivered { id } if *id == b)).await;
    let log = srv.log();
    let ids: Vec<(String, u32)> =
        log.iter().filter(|e| matches!(e.item, LogItem::Text { .. })).map(|e| (e.id.clone(), e.repeats)).collect();
    assert_eq!(ids, vec![(a.clone(), 0), (b.clone(), 0)]);
    let s = store.lock().unwrap();
    assert!(s.outbox_pending(&profile.id).unwrap().is_empty());
    let delivered = s.message_get(&b).unwrap().unwrap();
    assert_eq!(delivered.delivery, Some(hermes_store::Delivery::Delivered));
}
