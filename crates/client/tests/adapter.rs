//! The engine against the reference agent on loopback (adapter dialect). Requirement ids in the test names.

mod common;

use std::time::Duration;

use common::*;
use hermes_devserver::{Config as ServerConfig, LogItem};
use hermes_protocol::{Command, Dialect, Event, Refusal};

async fn server() -> hermes_devserver::Running {
    hermes_devserver::start(ServerConfig::fast()).await.expect("devserver")
}

fn texts(log: &[hermes_devserver::LogEntry]) -> Vec<(String, String, u32)> {
    log.iter()
        .filter_map(|e| match &e.item {
            LogItem::Text { text, .. } => Some((e.id.clone(), text.clone(), e.repeats)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a2_a3_a6_text_round_trip_sent_delivered_and_reply() {
    let srv = server().await;
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&srv.adapter_url(), Dialect::Adapter, srv.token(), "desktop-t1", dir.path()));
    c.ready().await;
    let id = c.text("hello agent").await;
    c.wait(5, |e| matches!(e, Event::Sent { id: i } if *i == id)).await;
    c.wait(5, |e| matches!(e, Event::Delivered { id: i } if *i == id)).await;
    // the reply may come before or after the delivery confirmation
    let done = |e: &Event| matches!(e, Event::Message { final_: true, .. });
    if !c.seen.iter().any(done) {
        c.wait(5, done).await;
    }
    let reply = c
        .seen
        .iter()
        .find_map(|e| match e {
            Event::Message { text, final_: true, .. } => Some(text.clone()),
            _ => None,
        })
        .unwrap();
    assert!(reply.contains("hello agent"), "{reply}");
    let log = texts(&srv.log());
    assert_eq!(log, vec![(id, "hello agent".to_string(), 0)]);
    // A-11: typing went on and then off, the avatar ended idle
    c.wait(5, |e| matches!(e, Event::Avatar { state } if state == "idle")).await;
    assert!(c.seen.iter().any(|e| matches!(e, Event::Typing { on: true })));
    assert!(c.seen.iter().any(|e| matches!(e, Event::Typing { on: false })));
}

#[tokio::test]
async fn a9_a10_a21_streamed_chunked_and_shuffled_replies_assemble_once() {
    let srv = server().await;
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&srv.adapter_url(), Dialect::Adapter, srv.token(), "desktop-t2", dir.path()));
    c.ready().await;
    c.text("/stream").await;
    let edited = c.final_reply().await;
    assert!(edited.len() > 200 && edited.contains("```"), "{edited}");
    c.text("/chunks").await;
    let chunked = c.final_reply().await;
    c.text("/chunks-shuffled").await;
    let shuffled = c.final_reply().await;
    assert_eq!(chunked, shuffled, "out-of-order chunks join in index order");
    // every final message id is final exactly once
    let finals: Vec<&hermes_protocol::SmallString> = c
        .seen
        .iter()
        .filter_map(|e| if let Event::Message { id, final_: true, .. } = e { Some(id) } else { None })
        .collect();
    let mut dedup = finals.clone();
    dedup.sort();
    dedup.dedup();
    assert_eq!(finals.len(), dedup.len(), "a reply was completed twice: {finals:?}");
}

#[tokio::test]
async fn a6_resend_unconfirmed_in_order_after_drop_and_never_resend_confirmed() {
    let srv = server().await;
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&srv.adapter_url(), Dialect::Adapter, srv.token(), "desktop-t3", dir.path()));
    c.ready().await;
    let first = c.text("confirmed one").await;
    c.wait(5, |e| matches!(e, Event::Delivered { id } if *id == first)).await;
    // drop the network under a burst: some are written, maybe unconfirmed
    let mut ids = Vec::new();
    for i in 0..20 {
        ids.push(c.text(&format!("burst {i}")).await);
    }
    srv.kick_all();
    for id in &ids {
        let id = id.clone();
        c.wait(20, move |e| matches!(e, Event::Delivered { id: i } if *i == id)).await;
    }
    let log = texts(&srv.log());
    let got: Vec<&String> = log.iter().map(|(id, _, _)| id).collect();
    let mut want = vec![&first];
    want.extend(ids.iter());
    assert_eq!(got, want, "every message arrived exactly once, in order");
    assert_eq!(log[0].2, 0, "the confirmed message was never resent");
}

#[tokio::test]
async fn a6_messages_written_offline_wait_and_go_in_order() {
    // find a free port, then start the server on it only after queueing
    let probe = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = probe.local_addr().unwrap();
    drop(probe);
    let dir = tempfile::tempdir().unwrap();
    let url = format!("ws://{addr}/ws");
    let mut c = start(config(&url, Dialect::Adapter, hermes_devserver::DEV_TOKEN, "desktop-t4", dir.path()));
    c.wait(5, |e| matches!(e, Event::Disconnected { retry_in_ms: Some(_), .. })).await;
    let a = c.text("offline a").await;
    let b = c.text("offline b").await;
    let srv = hermes_devserver::start(ServerConfig { bind: addr, ..ServerConfig::fast() }).await.unwrap();
    c.handle.send(Command::Reconnect).await.unwrap();
    c.wait(10, |e| matches!(e, Event::Delivered { id } if *id == b)).await;
    let log = texts(&srv.log());
    assert_eq!(log.iter().map(|l| l.0.clone()).collect::<Vec<_>>(), vec![a, b]);
}

#[tokio::test]
async fn a4_close_1008_means_access_denied_and_exactly_one_attempt() {
    let srv = hermes_devserver::start(ServerConfig {
        allowed_devices: Some(vec!["someone-else".into()]),
        ..ServerConfig::fast()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&srv.adapter_url(), Dialect::Adapter, srv.token(), "desktop-t5", dir.path()));
    c.wait(5, |e| matches!(e, Event::AccessDenied { .. })).await;
    let later = c.drain(2500).await;
    let attempts = c.seen.iter().filter(|e| matches!(e, Event::Connecting { .. })).count();
    assert_eq!(attempts, 1, "no retry after 1008: {later:?}");
    assert_eq!(srv.ready_count(), 0);
}

#[tokio::test]
async fn a4_wrong_token_is_denied() {
    let srv = server().await;
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&srv.adapter_url(), Dialect::Adapter, "0000", "desktop-t6", dir.path()));
    match c.wait(5, |e| matches!(e, Event::AccessDenied { .. })).await {
        Event::AccessDenied { reason } => assert!(!reason.contains("0000"), "the token leaked into the reason"),
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn a7_a22_unknown_and_malformed_frames_leave_the_connection_up() {
    let srv = server().await;
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&srv.adapter_url(), Dialect::Adapter, srv.token(), "desktop-t7", dir.path()));
    c.ready().await;
    for junk in [r#"{"t":"future_frame","x":1}"#, "not json", r#"{"t":"message"}"#, r#"{"t":"media","id":5}"#, "[]"] {
        assert_eq!(srv.send_raw_to_device("desktop-t7", junk), 1);
    }
    c.wait(5, |e| matches!(e, Event::Error { code, .. } if code == "malformed_frame")).await;
    c.text("still there?").await;
    let reply = c.final_reply().await;
    assert!(reply.contains("still there?"));
    assert_eq!(c.seen.iter().filter(|e| matches!(e, Event::Ready { .. })).count(), 1, "no reconnect happened");
}

#[tokio::test]
async fn a13_a15_a16_cards_answer_once_and_show_the_real_outcome() {
    let srv = server().await;
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&srv.adapter_url(), Dialect::Adapter, srv.token(), "desktop-t8", dir.path()));
    c.ready().await;
    c.text("/approve").await;
    let (card, options) = match c.wait(5, |e| matches!(e, Event::Prompt { .. })).await {
        Event::Prompt { id, kind, command, options, .. } => {
            assert_eq!(kind, "exec_approval");
            assert!(command.is_some());
            (id, options)
        }
        _ => unreachable!(),
    };
    // A-15: an invented option is refused locally, nothing sent
    let bad = c
        .handle
        .command(Command::Prompt { prompt_id: card.clone(), option_id: Some("made-up".into()), text: None })
        .await;
    assert_eq!(bad, Err(Refusal::NotAnOption("made-up".into())));
    let choice = options.last().unwrap().id.clone();
    c.handle
        .command(Command::Prompt { prompt_id: card.clone(), option_id: Some(choice.clone()), text: None })
        .await
        .unwrap();
    match c.wait(5, |e| matches!(e, Event::PromptDone { .. })).await {
        Event::PromptDone { prompt_id, option_id, expired } => {
            assert_eq!((prompt_id, option_id.as_deref(), expired), (card.clone(), Some(choice.as_str()), false));
        }
        _ => unreachable!(),
    }
    // A-13: the answer was a prompt frame, never a chat message
    let log = srv.log();
    assert!(log.iter().any(|e| matches!(&e.item, LogItem::PromptAnswer { .. })));
    assert!(!texts(&log).iter().any(|(_, t, _)| *t == choice));
    // A-16: an expiring card
    c.text("/expire").await;
    let exp = match c.wait(5, |e| matches!(e, Event::Prompt { .. })).await {
        Event::Prompt { id, .. } => id,
        _ => unreachable!(),
    };
    c.wait(10, |e| matches!(e, Event::PromptDone { prompt_id, expired: true, .. } if *prompt_id == exp)).await;
}

#[tokio::test]
async fn a18_a19_files_up_single_and_in_parts_and_over_limit_refused_before_sending() {
    let srv = hermes_devserver::start(ServerConfig { max_media_bytes: 16 * 1024 * 1024, ..ServerConfig::fast() })
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&srv.adapter_url(), Dialect::Adapter, srv.token(), "desktop-t9", dir.path()));
    c.ready().await;
    let small = dir.path().join("notes.txt");
    std::fs::write(&small, b"hello file").unwrap();
    let big = dir.path().join("big.bin");
    let big_bytes: Vec<u8> = (0..9 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&big, &big_bytes).unwrap();
    let huge = dir.path().join("huge.bin");
    std::fs::write(&huge, vec![0u8; 16 * 1024 * 1024 + 1]).unwrap();
    let send = |p: &std::path::Path| Command::File {
        path: p.to_string_lossy().into(),
        caption: Some("cap".into()),
        id: None,
        session: None,
        retry_of: None,
    };
    let a = c.handle.command(send(&small)).await.unwrap().unwrap();
    let b = c.handle.command(send(&big)).await.unwrap().unwrap();
    let refused = c.handle.command(send(&huge)).await;
    let refused = refused.unwrap_err();
    assert_eq!(refused.code(), "too_big");
    assert!(refused.to_string().contains("at most"), "over-limit explained: {refused}");
    c.wait(30, |e| matches!(e, Event::Delivered { id } if *id == b)).await;
    let ups: Vec<_> = c.seen.iter().filter(|e| matches!(e, Event::Progress { id, .. } if *id == b)).collect();
    assert_eq!(ups.len(), 3, "9 MiB goes in 3 parts with progress");
    let log = srv.log();
    let media: Vec<_> = log
        .iter()
        .filter_map(|e| match &e.item {
            LogItem::Media { filename, size, sha256, parts, .. } => {
                Some((e.id.clone(), filename.clone(), *size, sha256.clone(), *parts))
            }
            _ => None,
        })
        .collect();
    use sha2::Digest;
    let sha = hex::encode(sha2::Sha256::digest(&big_bytes));
    assert_eq!(media.len(), 2, "the over-limit file sent nothing: {media:?}");
    assert_eq!((media[0].0.as_str(), media[0].1.as_str(), media[0].2), (a.as_str(), "notes.txt", 10));
    assert_eq!(
        (media[1].0.as_str(), media[1].2, media[1].3.as_str(), media[1].4),
        (b.as_str(), big_bytes.len() as u64, sha.as_str(), 3)
    );
}

/// A-18 upload progress and cancel: each part's progress comes as that part has gone out (not all at once at the
/// end), and a cancel sent meanwhile is acted on between two parts: the rest is never written, the agent never
/// gets the file, and no `sent`/`delivered` follows.
#[tokio::test]
async fn a18_upload_progress_moves_part_by_part_and_cancel_stops_between_parts() {
    let srv = hermes_devserver::start(ServerConfig {
        max_media_bytes: 16 * 1024 * 1024,
        upload_delay: Duration::from_millis(400),
        ..ServerConfig::fast()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&srv.adapter_url(), Dialect::Adapter, srv.token(), "desktop-t9c", dir.path()));
    c.ready().await;
    let big = dir.path().join("slow.bin");
    std::fs::write(&big, vec![7u8; 12 * 1024 * 1024]).unwrap(); // 4 parts of 3 MiB
    let id = c
        .handle
        .command(Command::File {
            path: big.to_string_lossy().into(),
            caption: None,
            id: None,
            session: None,
            retry_of: None,
        })
        .await
        .unwrap()
        .unwrap();
    let first = c.wait(10, |e| matches!(e, Event::Progress { id: p, .. } if *p == id)).await;
    let Event::Progress { done, total, .. } = first else { unreachable!() };
    assert!(done < total, "the first part's progress comes before the upload is over: {done}/{total}");
    assert!(!c.seen.iter().any(|e| matches!(e, Event::Sent { id: s } if *s == id)));
    assert_eq!(c.handle.command(Command::Cancel { id: id.clone() }).await.unwrap(), Some(id.clone()));
    c.wait(5, |e| matches!(e, Event::Error { code, id: Some(i), .. } if code == "cancelled" && *i == id)).await;
    let parts_seen = c.seen.iter().filter(|e| matches!(e, Event::Progress { id: p, .. } if *p == id)).count();
    let after = c.drain(3000).await;
    assert!(
        !after.iter().any(|e| matches!(e, Event::Progress { id: p, .. } | Event::Sent { id: p } | Event::Delivered { id: p } if *p == id)),
        "nothing of the upload after the cancel: {after:?}"
    );
    assert!(parts_seen < 4, "the cancel came between parts, not after the last: {parts_seen} of 4");
    let got_it = srv.log().iter().any(|e| e.id == id && matches!(e.item, LogItem::Media { .. }));
    assert!(!got_it, "the agent never got the cancelled file");
    // the connection is fine afterwards
    c.text("still here?").await;
    assert!(c.final_reply().await.contains("still here?"));
}

/// A-20 with A-11's order: a message, a file and another message read in one burst reach the user in that order
/// (saving the file must not let the first message fall behind it, nor the second overtake it).
#[tokio::test]
async fn a20_a_received_file_keeps_its_place_between_messages() {
    let srv = server().await;
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&srv.adapter_url(), Dialect::Adapter, srv.token(), "desktop-t10o", dir.path()));
    c.ready().await;
    for round in 0..5 {
        let burst = [
            format!(r#"{{"t":"message","id":"before-{round}","text":"Here is the file:","final":true}}"#),
            format!(
                r#"{{"t":"media","id":"file-{round}","kind":"document","mime":"text/plain","filename":"n{round}.txt","part":0,"parts":1,"final":true,"data":"aGVsbG8="}}"#
            ),
            format!(r#"{{"t":"message","id":"after-{round}","text":"That was it.","final":true}}"#),
        ];
        for f in &burst {
            srv.send_raw_to_device("desktop-t10o", f);
        }
        let mut order = Vec::new();
        while order.len() < 3 {
            match c.wait(5, |e| matches!(e, Event::Message { final_: true, .. } | Event::Media { .. })).await {
                Event::Message { id, .. } => order.push(id.to_string()),
                Event::Media { id, .. } => order.push(id),
                _ => unreachable!(),
            }
        }
        assert_eq!(order, [format!("before-{round}"), format!("file-{round}"), format!("after-{round}")]);
    }
}

#[tokio::test]
async fn a20_media_down_single_parts_and_url_saved_inside_the_media_folder() {
    let srv = server().await;
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&srv.adapter_url(), Dialect::Adapter, srv.token(), "desktop-t10", dir.path()));
    c.ready().await;
    c.text("/media").await;
    let mut kinds = Vec::new();
    for _ in 0..3 {
        if let Event::Media { kind, path, size, .. } = c.wait(15, |e| matches!(e, Event::Media { .. })).await {
            let p = std::path::Path::new(&path);
            assert!(p.starts_with(dir.path().join("media")), "{path}");
            assert_eq!(std::fs::metadata(p).unwrap().len(), size);
            kinds.push(kind);
        }
    }
    kinds.sort();
    assert_eq!(kinds, vec!["document", "image", "voice"]);
    // a hostile filename lands inside the media folder
    let frame = r#"{"t":"media","id":"evil","kind":"document","mime":"text/plain","filename":"../../../../tmp/evil.sh","part":0,"parts":1,"final":true,"data":"ZWNobyBwd25lZA=="}"#;
    srv.send_raw_to_device("desktop-t10", frame);
    match c.wait(5, |e| matches!(e, Event::Media { id, .. } if id == "evil")).await {
        Event::Media { path, filename, .. } => {
            assert!(std::path::Path::new(&path).starts_with(dir.path().join("media")));
            assert_eq!(filename, "evil.sh");
        }
        _ => unreachable!(),
    }
    // over the limit: refused with a clear error, nothing saved
    let before = std::fs::read_dir(dir.path().join("media")).unwrap().count();
    srv.send_raw_to_device("desktop-t10", r#"{"t":"media","id":"big","kind":"document","filename":"x","size":999999999,"part":0,"parts":1,"final":true,"data":""}"#);
    c.wait(5, |e| matches!(e, Event::Error { code, id: Some(id), .. } if code == "too_big" && id == "big")).await;
    assert_eq!(std::fs::read_dir(dir.path().join("media")).unwrap().count(), before);
}

#[tokio::test]
async fn a30_ws_to_a_public_address_is_refused_before_dialling() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config("ws://93.184.216.34/ws", Dialect::Adapter, "t", "d", dir.path());
    let err = hermes_client::spawn(cfg, Box::new(hermes_client::MemoryPersist::default())).err().expect("refused");
    assert!(err.to_string().contains("refused"), "{err}");
}

#[tokio::test]
async fn reconnects_after_the_server_restarts() {
    let srv = server().await;
    let addr = srv.addr();
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&srv.adapter_url(), Dialect::Adapter, srv.token(), "desktop-t11", dir.path()));
    c.ready().await;
    srv.shutdown().await;
    c.wait(5, |e| matches!(e, Event::Disconnected { .. })).await;
    let _srv2 = hermes_devserver::start(ServerConfig { bind: addr, ..ServerConfig::fast() }).await.unwrap();
    c.wait(10, |e| matches!(e, Event::Ready { .. })).await;
    // and it is usable again
    c.text("after the restart").await;
    assert!(c.final_reply().await.contains("after the restart"));
}
