//! Scheduled (cron) messages as Hermes delivers them to the mobile platform (A-1: `device.id` is the address for cron
//! delivery; §10 `device_offline`): an ordinary final `message` frame to the device's live connections when the job
//! fires, nothing to a device that is not connected then, and the demo's `/remind` schedules one for the asking device.

mod common;

use std::time::Duration;

use common::*;
use hermes_devserver::{Config, CronOutcome, start};
use serde_json::json;

#[tokio::test]
async fn a1_a_scheduled_message_reaches_the_device_as_an_ordinary_message_frame() {
    let s = start(Config::fast()).await.unwrap();
    let (mut d1, _) = adapter(&s, "d1").await;
    let (mut d2, _) = adapter(&s, "d2").await;
    let job = s.schedule_to_device("d1", Duration::from_millis(300), "Stand-up in 5 minutes");
    let id = job.id.clone();
    // nothing before it is due
    d1.expect_silence(Duration::from_millis(150)).await;
    let frame = d1.recv().await;
    assert_eq!(frame["t"], "message");
    assert_eq!(frame["id"], id.as_str());
    assert_eq!(frame["text"], "Stand-up in 5 minutes");
    assert_eq!(frame["final"], true);
    assert!(frame.get("reply_to").is_none() && frame.get("chunk").is_none(), "it answers nothing: {frame}");
    assert_eq!(job.outcome().await, CronOutcome::Delivered { connections: 1 });
    // another device's connection hears nothing of it
    d2.expect_silence(Duration::from_millis(200)).await;
}

#[tokio::test]
async fn a_device_without_a_live_connection_is_not_delivered_to() {
    let s = start(Config::fast()).await.unwrap();
    let (d1, _) = adapter(&s, "d1").await;
    drop(d1);
    let job = s.schedule_to_device("d1", Duration::from_millis(300), "nobody hears this");
    assert_eq!(job.outcome().await, CronOutcome::DeviceOffline);
    // a later connection of the device does not get it either (Hermes does not keep it)
    let (mut again, _) = adapter(&s, "d1").await;
    again.expect_silence(Duration::from_millis(300)).await;
    // waiting from a thread outside the server's runtime
    let job = s.schedule_to_device("d1", Duration::from_millis(100), "blocking wait");
    let outcome = tokio::task::spawn_blocking(move || job.wait(Duration::from_secs(5))).await.unwrap();
    assert_eq!(outcome, Some(CronOutcome::Delivered { connections: 1 }));
    assert_eq!(again.recv().await["text"], "blocking wait");
    // a server that stops first cancels what is still due
    let late = s.schedule_to_device("d1", Duration::from_secs(60), "never");
    s.shutdown().await;
    assert_eq!(late.outcome().await, CronOutcome::Cancelled);
}

#[tokio::test]
async fn demo_remind_schedules_a_message_for_the_asking_device() {
    let s = start(Config::fast()).await.unwrap();
    let (mut ws, _) = adapter(&s, "d1").await;
    ws.send(json!({"t":"text","id":"r1","text":"/remind 1 Water the plants"})).await;
    let answer = ws.recv_until(|v| v["t"] == "message").await.pop().unwrap();
    assert_eq!(answer["reply_to"], "r1");
    assert!(answer["text"].as_str().unwrap().starts_with("⏰ Scheduled: in 1 s"), "{answer}");
    let later = ws.recv_until(|v| v["t"] == "message").await.pop().unwrap();
    assert_eq!(later["text"], "Water the plants");
    assert!(later.get("reply_to").is_none(), "{later}");
    ws.send(json!({"t":"text","id":"r2","text":"/help"})).await;
    let help = ws.recv_until(|v| v["t"] == "message").await.pop().unwrap();
    assert!(help["text"].as_str().unwrap().contains("/remind"), "{help}");
}
