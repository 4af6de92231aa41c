//! The demo agent as a new device meets Hermes: the pairing code before approval and the home-channel
//! reminder with `/sethome` (spec §10).

mod common;

use std::time::Duration;

use common::*;
use hermes_devserver::{Config, Dialect, LogItem, start};
use serde_json::json;

/// The text of the next `message` frame (the demo's replies come in `avatar`/`typing` frames).
async fn reply(ws: &mut Ws) -> String {
    let frames = ws.recv_until(|v| v["t"] == "message").await;
    let text = frames.last().unwrap()["text"].as_str().unwrap().to_string();
    ws.recv_until(|v| v["t"] == "avatar" && v["state"] == "idle").await;
    text
}

#[tokio::test]
async fn a8_an_unapproved_device_gets_a_pairing_code_then_silence_until_approved() {
    let s = start(Config { pairing_code_first: true, ..Config::fast() }).await.unwrap();
    let (mut ws, _) = adapter(&s, "d1").await;
    ws.send(json!({"t":"text","id":"m1","text":"hello"})).await;
    let first = reply(&mut ws).await;
    assert!(first.contains("Here's your pairing code: `"), "{first}");
    assert!(first.contains("hermes pairing approve mobile "), "{first}");
    // one code per device: later messages are received (logged) but not answered, after a reconnect too
    ws.send(json!({"t":"text","id":"m2","text":"anyone there?"})).await;
    ws.expect_silence(Duration::from_millis(300)).await;
    drop(ws);
    let (mut ws, _) = adapter(&s, "d1").await;
    ws.send(json!({"t":"text","id":"m3","text":"still nothing?"})).await;
    ws.expect_silence(Duration::from_millis(300)).await;
    assert_eq!(s.log().iter().map(|e| e.id.as_str()).collect::<Vec<_>>(), ["m1", "m2", "m3"]);
    // another device has its own first contact
    let (mut other, _) = adapter(&s, "d2").await;
    other.send(json!({"t":"text","id":"o1","text":"hi"})).await;
    assert!(reply(&mut other).await.contains("pairing code"));

    s.approve_device("d1");
    ws.send(json!({"t":"text","id":"m4","text":"approved now?"})).await;
    assert_eq!(reply(&mut ws).await, "You said: approved now?");
    other.send(json!({"t":"text","id":"o2","text":"and me?"})).await;
    other.expect_silence(Duration::from_millis(300)).await;
}

#[tokio::test]
async fn a8_without_the_option_every_device_is_answered_at_once() {
    let s = start(Config::fast()).await.unwrap();
    let (mut ws, _) = adapter(&s, "d1").await;
    ws.send(json!({"t":"text","id":"m1","text":"hello"})).await;
    assert_eq!(reply(&mut ws).await, "You said: hello");
}

#[tokio::test]
async fn home_reminder_and_sethome_answer_as_hermes_does() {
    let s = start(Config::fast()).await.unwrap();
    let (mut ws, _) = adapter(&s, "d1").await;
    ws.send(json!({"t":"text","id":"h1","text":"/home"})).await;
    let reminder = reply(&mut ws).await;
    assert!(reminder.starts_with("📬 No home channel is set for Mobile."), "{reminder}");
    assert!(reminder.contains("Type /sethome to make this chat your home channel"), "{reminder}");
    ws.send(json!({"t":"text","id":"h2","text":"/sethome"})).await;
    let set = reply(&mut ws).await;
    assert!(set.starts_with("✅ Home channel set to **Mobile** (ID: mobile:d1)."), "{set}");
    let log = s.log();
    assert_eq!(log[1].dialect, Dialect::Adapter);
    assert_eq!(log[1].item, LogItem::Text { text: "/sethome".into(), reply_to: None });
    ws.send(json!({"t":"text","id":"h3","text":"/help"})).await;
    let help = reply(&mut ws).await;
    assert!(help.contains("/home") && help.contains("/sethome"), "{help}");
}
