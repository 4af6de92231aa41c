//! The engine's and the outbox's errors are typed values, asserted exactly (no `Result<_, String>` to match text).

mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use hermes_client::{Persist, PersistError, StorePersist};
use hermes_protocol::{Command, Dialect, Event, Refusal};
use hermes_store::{NewProfile, Store};

/// a store another thread left poisoned is `PersistError::Poisoned` on every outbox call, not a panic.
#[test]
fn a6_a_poisoned_store_is_persist_error_poisoned() {
    let store = Store::open_in_memory().unwrap();
    let p = store.profile_create(&NewProfile::adapter("p", "ws://127.0.0.1:1")).unwrap();
    let c = store.conversation_for_adapter(&p.id).unwrap();
    let store = Arc::new(Mutex::new(store));
    let mut persist = StorePersist::new(store.clone(), &p.id, &c.id, Path::new("/nonexistent"));
    assert!(matches!(persist.outbox_pending(), Ok(v) if v.is_empty()));
    let s = store.clone();
    let _ = std::thread::spawn(move || {
        let _guard = s.lock().unwrap();
        panic!("poison the store");
    })
    .join();
    assert!(matches!(persist.outbox_pending(), Err(PersistError::Poisoned)));
    assert!(matches!(persist.outbox_confirm("x"), Err(PersistError::Poisoned)));
    assert!(matches!(persist.outbox_fail("x", "cancelled", "cancelled"), Err(PersistError::Poisoned)));
    assert_eq!(persist.outbox_insert(&text_record("y")), Err(Refusal::Store));
}

fn text_record(id: &str) -> hermes_client::OutboxRecord {
    hermes_client::OutboxRecord {
        id: id.into(),
        payload: hermes_client::Payload::Text { text: "hi".into(), reply_to: None, session: None },
        created_unix: 1,
        retry_of: None,
    }
}

/// Once the engine has stopped, `send` and `command` answer `Refusal::EngineStopped`.
#[tokio::test]
async fn a_stopped_engine_answers_engine_stopped() {
    let dir = tempfile::tempdir().unwrap();
    // nothing listens there: the engine runs, disconnected
    let mut c = start(config("ws://127.0.0.1:9/ws", Dialect::Adapter, "t", "dev", dir.path()));
    c.wait(5, |e| matches!(e, Event::Disconnected { .. })).await;
    assert_eq!(c.handle.send(Command::Reconnect).await, Ok(()));
    assert_eq!(c.handle.command(Command::Quit).await, Ok(None));
    while c.events.recv().await.is_some() {}
    // the engine's task is ending: its command channel closes with it
    let mut answer = Ok(());
    for _ in 0..200 {
        answer = c.handle.send(Command::Reconnect).await;
        if answer.is_err() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(answer, Err(Refusal::EngineStopped));
    assert_eq!(c.handle.command(Command::Reconnect).await, Err(Refusal::EngineStopped));
}
