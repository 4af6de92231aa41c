//! Behaviour of every table's operations.

use hermes_store::*;
use serde_json::json;

fn store() -> Store {
    Store::open_in_memory().expect("open")
}

fn new_profile(name: &str, dialect: Dialect) -> NewProfile {
    NewProfile {
        name: name.into(),
        url: "wss://agent.example/ws".into(),
        dialect,
        v3_user_id: None,
        allow_insecure_ws: false,
        avatar_url: None,
    }
}

fn setup_v3(s: &Store) -> (Profile, Conversation) {
    let p = s.profile_create(&new_profile("Agent", Dialect::V3)).expect("profile");
    let c = s.conversation_create(&p.id, "Chat").expect("conversation");
    (p, c)
}

fn msg(conv: &str, dir: Direction, text: &str, at: i64) -> Message {
    Message::new(conv, dir, text, at)
}

// ---------------------------------------------------------------- profiles

/// The home channel (`/sethome`) and the device's approval are kept per profile; a home must be one of the
/// profile's own conversations and goes when that conversation is deleted.
#[test]
fn profile_home_and_pairing() {
    let s = store();
    let (p, c) = setup_v3(&s);
    let (other, other_c) = setup_v3(&s);
    assert_eq!((p.home_conversation_id.as_deref(), p.paired_at), (None, None));
    let p1 = s.profile_set_home(&p.id, Some(&c.id)).expect("set home");
    assert_eq!(p1.home_conversation_id.as_deref(), Some(c.id.as_str()));
    assert!(matches!(s.profile_set_home(&p.id, Some(&other_c.id)), Err(Error::InvalidInput(_))), "not its own");
    assert!(matches!(s.profile_set_home("nope", None), Err(Error::NotFound(_))));
    assert_eq!(s.profile_set_home(&p.id, None).expect("clear").home_conversation_id, None);
    s.profile_set_home(&p.id, Some(&c.id)).expect("set again");
    s.conversation_delete(&c.id).expect("delete");
    assert_eq!(s.profile_get(&p.id).unwrap().unwrap().home_conversation_id, None, "no dangling home");

    let first = s.profile_mark_paired(&other.id).expect("paired").paired_at.expect("set");
    let again = s.profile_mark_paired(&other.id).expect("paired again").paired_at;
    assert_eq!(again, Some(first), "the first approval is kept");
    s.profile_clear_paired(&other.id).expect("clear");
    assert_eq!(s.profile_get(&other.id).unwrap().unwrap().paired_at, None);
    assert!(matches!(s.profile_mark_paired("nope"), Err(Error::NotFound(_))));
}

#[test]
fn profile_create_get_update_delete() {
    let s = store();
    let mut np = new_profile("Hermes", Dialect::V3);
    np.v3_user_id = Some("user-7".into());
    np.avatar_url = Some("https://x/a.png".into());
    np.allow_insecure_ws = true;
    let p = s.profile_create(&np).expect("create");
    assert_eq!(p.name, "Hermes");
    assert!(p.allow_insecure_ws);
    assert!(!p.has_token);
    assert_eq!(p.keychain_account(), p.id);
    assert_eq!(p.device_id.len(), "desktop-".len() + 16);
    assert!(p.device_id.starts_with("desktop-"));
    assert!(p.device_id[8..].bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
    assert_eq!(s.profile_get(&p.id).expect("get"), Some(p.clone()));

    let mut up = ProfileUpdate::from(&p);
    up.name = "Renamed".into();
    up.url = "ws://localhost:1234".into();
    up.v3_user_id = None;
    let p2 = s.profile_update(&p.id, &up).expect("update");
    assert_eq!(p2.name, "Renamed");
    assert_eq!(p2.v3_user_id, None);
    assert_eq!(p2.device_id, p.device_id, "device id is stable");
    assert_eq!(p2.dialect, p.dialect);
    assert_eq!(p2.created_at, p.created_at);

    s.profile_set_has_token(&p.id, true).expect("flag");
    assert!(s.profile_get(&p.id).expect("get").expect("some").has_token);

    let other = s.profile_create(&new_profile("B", Dialect::Adapter)).expect("b");
    assert_ne!(other.device_id, p.device_id);
    assert_eq!(s.profiles().expect("list").len(), 2);

    assert!(s.profile_delete(&p.id).expect("delete").is_empty());
    assert_eq!(s.profile_get(&p.id).expect("get"), None);
    assert!(matches!(s.profile_delete(&p.id), Err(Error::NotFound(_))));
    assert!(matches!(s.profile_update(&p.id, &up), Err(Error::NotFound(_))));
    assert!(matches!(s.profile_set_has_token(&p.id, false), Err(Error::NotFound(_))));
}

#[test]
fn device_id_survives_reopen() {
    let dir = tempfile::tempdir().expect("tmp");
    let (id, dev) = {
        let s = Store::open_in(dir.path()).expect("open");
        let p = s.profile_create(&new_profile("A", Dialect::Adapter)).expect("create");
        (p.id, p.device_id)
    };
    let s = Store::open_in(dir.path()).expect("reopen");
    assert_eq!(s.profile_get(&id).expect("get").expect("some").device_id, dev);
    assert!(dir.path().join(DB_FILE_NAME).exists());
    assert_eq!(s.media_dir(), Some(dir.path().join("media")));
    assert_eq!(s.path(), Some(dir.path().join(DB_FILE_NAME).as_path()));
}

#[test]
fn profile_delete_cascades_and_returns_media_paths() {
    let s = store();
    let (p, c) = setup_v3(&s);
    let m = msg(&c.id, Direction::Up, "hello", 1);
    s.message_upsert(&m).expect("msg");
    s.outbox_insert(&NewOutboxEntry {
        id: m.id.clone(),
        profile_id: p.id.clone(),
        conversation_id: c.id.clone(),
        kind: OutboxKind::Text,
        payload: json!({"text": "hello"}),
    })
    .expect("outbox");
    s.media_insert(&media(&p.id, "m1", "2024/a.png", &"ab".repeat(32))).expect("media");
    let paths = s.profile_delete(&p.id).expect("delete");
    assert_eq!(paths, vec!["2024/a.png".to_string()]);
    assert_eq!(s.conversation_get(&c.id).expect("conv"), None);
    assert_eq!(s.message_get(&m.id).expect("msg"), None);
    assert_eq!(s.outbox_get(&m.id).expect("outbox"), None);
    assert_eq!(s.media_get("m1").expect("media"), None);
    assert!(s.search("hello", &SearchOptions::default()).expect("search").is_empty());
    assert!(s.integrity_check().expect("check").is_empty());
}

// ----------------------------------------------------------- conversations

#[test]
fn adapter_profile_has_exactly_one_conversation() {
    let s = store();
    let p = s.profile_create(&new_profile("Adapter", Dialect::Adapter)).expect("p");
    let c1 = s.conversation_for_adapter(&p.id).expect("c1");
    let c2 = s.conversation_for_adapter(&p.id).expect("c2");
    assert_eq!(c1, c2);
    assert_eq!(c1.session, format!("mobile:{}", p.device_id));
    assert_eq!(c1.session, adapter_session(&p.device_id));
    assert_eq!(s.conversations(&p.id).expect("list").len(), 1);
    assert!(matches!(s.conversation_create(&p.id, "second"), Err(Error::WrongDialect { .. })));
    assert!(matches!(s.conversation_for_adapter("nope"), Err(Error::NotFound(_))));
}

#[test]
fn v3_conversations_create_rename_delete_and_order() {
    let s = store();
    let p = s.profile_create(&new_profile("V3", Dialect::V3)).expect("p");
    assert!(matches!(s.conversation_for_adapter(&p.id), Err(Error::WrongDialect { .. })));
    let a = s.conversation_create(&p.id, "A").expect("a");
    let b = s.conversation_create(&p.id, "B").expect("b");
    assert_ne!(a.session, b.session);
    for c in [&a, &b] {
        let u = uuid::Uuid::parse_str(&c.session).expect("session is a uuid");
        assert_eq!(u.get_version_num(), 4);
    }
    // A message in A makes A the most recently updated.
    let far_future = now_ms() + 1_000_000;
    s.message_upsert(&msg(&a.id, Direction::Down, "fresh", far_future)).expect("m");
    let list = s.conversations(&p.id).expect("list");
    assert_eq!(list.iter().map(|c| c.title.as_str()).collect::<Vec<_>>(), ["A", "B"]);
    assert_eq!(list[0].updated_at, far_future);
    assert_eq!(list[0].last_preview.as_deref(), Some("fresh"));

    s.conversation_rename(&b.id, "Bee").expect("rename");
    assert_eq!(s.conversation_get(&b.id).expect("get").expect("some").title, "Bee");
    s.conversation_delete(&a.id).expect("delete");
    assert_eq!(s.count(&a.id).expect("count"), 0);
    assert!(matches!(s.conversation_delete(&a.id), Err(Error::NotFound(_))));
    assert!(matches!(s.conversation_rename(&a.id, "x"), Err(Error::NotFound(_))));
    assert_eq!(s.conversations(&p.id).expect("list").len(), 1);
}

#[test]
fn drafts_are_kept_per_conversation_replaced_cleared_and_deleted_with_it() {
    let dir = tempfile::tempdir().expect("tmp");
    let (a, b) = {
        let s = Store::open_in(dir.path()).expect("open");
        let (_, a) = setup_v3(&s);
        let b = s.conversation_create(&a.profile_id, "Other").expect("b");
        assert_eq!(s.draft_get(&a.id).expect("get"), None);
        s.draft_set(&a.id, "half a thought").expect("set");
        s.draft_set(&a.id, "half a thought, finished\nover two lines").expect("replace");
        s.draft_set(&b.id, "other chat").expect("set b");
        (a.id, b.id)
    };
    // a draft survives closing the app
    let s = Store::open_in(dir.path()).expect("reopen");
    assert_eq!(s.draft_get(&a).expect("get").as_deref(), Some("half a thought, finished\nover two lines"));
    assert_eq!(s.draft_get(&b).expect("get").as_deref(), Some("other chat"));
    // sent (or erased): an empty or blank text removes it
    s.draft_set(&a, "  \n ").expect("clear");
    assert_eq!(s.draft_get(&a).expect("get"), None);
    s.draft_set(&a, "").expect("clear again is fine");
    // deleted with its conversation
    s.conversation_delete(&b).expect("delete");
    assert_eq!(s.draft_get(&b).expect("get"), None);
    assert!(matches!(s.draft_set(&b, "x"), Err(Error::NotFound(_))));
    // over the limit: refused whole, the previous draft kept
    s.draft_set(&a, "kept").expect("set");
    let long = "x".repeat(MAX_DRAFT_BYTES + 1);
    assert!(matches!(s.draft_set(&a, &long), Err(Error::InvalidInput(_))));
    assert_eq!(s.draft_get(&a).expect("get").as_deref(), Some("kept"));
    s.draft_set(&a, &long[1..]).expect("exactly the limit");
}

#[test]
fn last_preview_tracks_newest_message_only() {
    let s = store();
    let (_, c) = setup_v3(&s);
    let newer = msg(&c.id, Direction::Down, "newer", 200);
    s.message_upsert(&newer).expect("newer");
    // An older message (history sync) does not replace the preview.
    s.message_upsert(&msg(&c.id, Direction::Down, "older", 100)).expect("older");
    let conv = |s: &Store| s.conversation_get(&c.id).expect("get").expect("some");
    assert_eq!(conv(&s).last_preview.as_deref(), Some("newer"));
    // Streaming edit of the newest one updates it.
    let mut edited = newer.clone();
    edited.text = "newer, longer".into();
    edited.updated_at = 300;
    s.message_upsert(&edited).expect("edit");
    assert_eq!(conv(&s).last_preview.as_deref(), Some("newer, longer"));
    assert_eq!(conv(&s).updated_at.max(300), conv(&s).updated_at);
    // Attachment-only message.
    let mut att = msg(&c.id, Direction::Up, "", 400);
    att.attachments = vec!["media-1".into()];
    s.message_upsert(&att).expect("att");
    assert_eq!(conv(&s).last_preview.as_deref(), Some("[attachment]"));
    // Deleting the newest falls back to the previous one.
    assert!(s.message_delete(&att.id).expect("del"));
    assert_eq!(conv(&s).last_preview.as_deref(), Some("newer, longer"));
}

// ---------------------------------------------------------------- messages

#[test]
fn streamed_reply_is_upserted_in_place() {
    let s = store();
    let (_, c) = setup_v3(&s);
    let mut m = msg(&c.id, Direction::Down, "", 1000);
    m.assembly = Assembly::Streaming;
    let mut text = String::new();
    for (i, delta) in ["Hel", "lo, ", "world"].iter().enumerate() {
        text.push_str(delta);
        m.text = text.clone();
        m.updated_at = 1000 + i as i64;
        s.message_upsert(&m).expect("upsert");
    }
    m.assembly = Assembly::Final;
    m.server_id = Some("srv-1".into());
    s.message_upsert(&m).expect("final");
    assert_eq!(s.count(&c.id).expect("count"), 1);
    let got = s.message_get(&m.id).expect("get").expect("some");
    assert_eq!(got, m);
    assert_eq!(got.text, "Hello, world");
    assert_eq!(s.message_by_server_id(&c.id, "srv-1").expect("by server").map(|m| m.id), Some(m.id.clone()));
    // A later upsert without server id keeps the known one.
    let mut again = m.clone();
    again.server_id = None;
    s.message_upsert(&again).expect("again");
    assert_eq!(s.message_get(&m.id).expect("get").expect("some").server_id.as_deref(), Some("srv-1"));
    // Search sees only the final text, once.
    let hits = s.search("world", &SearchOptions::default()).expect("search");
    assert_eq!(hits.len(), 1);
    assert!(s.search("Hel", &SearchOptions { prefix_last: false, ..Default::default() }).expect("search").is_empty());
}

#[test]
fn streaming_messages_are_indexed_once_final() {
    let s = store();
    let (_, c) = setup_v3(&s);
    let mut m = msg(&c.id, Direction::Down, "partial zeppelin", 1);
    m.assembly = Assembly::Streaming;
    s.message_upsert(&m).expect("stream");
    let find = |s: &Store, q: &str| s.search(q, &SearchOptions::default()).expect("search").len();
    assert_eq!(find(&s, "zeppelin"), 0, "not searchable while streaming");
    m.text = "partial zeppelin complete".into();
    m.assembly = Assembly::Final;
    s.message_upsert(&m).expect("final");
    assert_eq!(find(&s, "complete"), 1);
    // Back to streaming (a v3 edit being re-streamed) removes it from the index.
    m.assembly = Assembly::Streaming;
    s.message_upsert(&m).expect("restream");
    assert_eq!(find(&s, "complete"), 0);
    assert!(s.integrity_check().expect("check").is_empty());

    // Start-up recovery: interrupted streams become final, with an error, and searchable.
    let mut other = msg(&c.id, Direction::Down, "second zeppelin", 2);
    other.assembly = Assembly::Streaming;
    other.error = Some(MessageError { code: "own".into(), text: "kept".into() });
    s.message_upsert(&other).expect("other");
    let err = MessageError { code: "interrupted".into(), text: "reply was cut off".into() };
    assert_eq!(s.messages_finalize_interrupted(&err).expect("finalize"), 2);
    let got = s.message_get(&m.id).expect("get").expect("some");
    assert_eq!((got.assembly, got.error), (Assembly::Final, Some(err.clone())));
    let got = s.message_get(&other.id).expect("get").expect("some");
    assert_eq!(got.error.map(|e| e.code), Some("own".to_string()));
    assert_eq!(find(&s, "zeppelin"), 2);
    assert_eq!(s.messages_finalize_interrupted(&err).expect("again"), 0);
    assert!(s.integrity_check().expect("check").is_empty());
}

#[test]
fn integrity_check_detects_an_fts_index_out_of_sync() {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("db.sqlite3");
    let s = Store::open(&path).expect("open");
    let (_, c) = setup_v3(&s);
    s.message_upsert(&msg(&c.id, Direction::Down, "in sync", 1)).expect("m");
    assert!(s.integrity_check().expect("check").is_empty());
    {
        let raw = rusqlite::Connection::open(&path).expect("raw");
        raw.execute("INSERT INTO messages_fts(rowid, text) VALUES (424242, 'ghost')", []).expect("tamper");
    }
    assert!(!s.integrity_check().expect("check").is_empty());
}

#[test]
fn message_fields_roundtrip_and_setters() {
    let s = store();
    let (_, c) = setup_v3(&s);
    let mut m = msg(&c.id, Direction::Up, "ping", 5);
    m.reply_to = Some("other".into());
    m.edit_count = 2;
    m.attachments = vec!["a".into(), "b".into()];
    m.error = Some(MessageError { code: "E1".into(), text: "bad".into() });
    s.message_upsert(&m).expect("upsert");
    assert_eq!(s.message_get(&m.id).expect("get"), Some(m.clone()));

    s.message_set_delivery(&m.id, Delivery::Delivered).expect("delivery");
    s.message_set_error(&m.id, None).expect("clear error");
    s.message_set_server_id(&m.id, "s-9").expect("server id");
    let got = s.message_get(&m.id).expect("get").expect("some");
    assert_eq!(got.delivery, Some(Delivery::Delivered));
    assert_eq!(got.error, None);
    assert_eq!(got.server_id.as_deref(), Some("s-9"));

    assert!(matches!(s.message_set_delivery("nope", Delivery::Sent), Err(Error::NotFound(_))));
    assert!(matches!(s.message_set_error("nope", None), Err(Error::NotFound(_))));
    assert!(matches!(s.message_set_server_id("nope", "x"), Err(Error::NotFound(_))));
    assert!(!s.message_delete("nope").expect("delete"));
}

#[test]
fn server_id_is_unique_per_conversation_only() {
    let s = store();
    let (p, c) = setup_v3(&s);
    let c2 = s.conversation_create(&p.id, "other").expect("c2");
    let mut a = msg(&c.id, Direction::Down, "a", 1);
    a.server_id = Some("dup".into());
    s.message_upsert(&a).expect("a");
    let mut b = msg(&c.id, Direction::Down, "b", 2);
    b.server_id = Some("dup".into());
    assert!(matches!(s.message_upsert(&b), Err(Error::Constraint(_))));
    let mut b2 = msg(&c2.id, Direction::Down, "b", 2);
    b2.server_id = Some("dup".into());
    s.message_upsert(&b2).expect("other conversation may reuse it");
    // Moving a message to another conversation via upsert is refused.
    let mut moved = a.clone();
    moved.conversation_id = c2.id.clone();
    assert!(matches!(s.message_upsert(&moved), Err(Error::InvalidInput(_))));
    // Unknown conversation: foreign key.
    assert!(matches!(s.message_upsert(&msg("no-such-conv", Direction::Down, "x", 1)), Err(Error::Constraint(_))));
}

#[test]
fn paging_newest_first_with_cursor() {
    let s = store();
    let (_, c) = setup_v3(&s);
    let mut ids = Vec::new();
    for i in 0..25 {
        // Pairs share a timestamp to exercise the insertion-order tie-breaker.
        let m = msg(&c.id, Direction::Down, &format!("m{i}"), 1000 + i / 2);
        s.message_upsert(&m).expect("upsert");
        ids.push(m.id);
    }
    assert_eq!(s.count(&c.id).expect("count"), 25);
    let mut seen = Vec::new();
    let mut before = None;
    let mut pages = 0;
    loop {
        let page = s.page(&c.id, before, 10).expect("page");
        pages += 1;
        seen.extend(page.messages.iter().map(|m| m.id.clone()));
        match page.next {
            Some(cur) => before = Some(cur),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    ids.reverse();
    assert_eq!(seen, ids);
    // Exactly-full last page reports no next.
    let p = s.page(&c.id, None, 25).expect("page");
    assert_eq!(p.messages.len(), 25);
    assert_eq!(p.next, None);
    assert!(s.page("empty", None, 10).expect("page").messages.is_empty());
}

// ------------------------------------------------------------------ outbox

fn entry(p: &Profile, c: &Conversation, id: &str) -> NewOutboxEntry {
    NewOutboxEntry {
        id: id.into(),
        profile_id: p.id.clone(),
        conversation_id: c.id.clone(),
        kind: OutboxKind::Text,
        payload: json!({"text": id, "reply_to": null}),
    }
}

#[test]
fn outbox_lifecycle() {
    let s = store();
    let (p, c) = setup_v3(&s);
    let ids = |v: Vec<OutboxEntry>| v.into_iter().map(|e| e.id).collect::<Vec<_>>();
    let e1 = s.outbox_insert(&entry(&p, &c, "w1")).expect("w1");
    s.outbox_insert(&entry(&p, &c, "w2")).expect("w2");
    s.outbox_insert(&entry(&p, &c, "w3")).expect("w3");
    assert_eq!(e1.state, OutboxState::Pending);
    assert!(matches!(s.outbox_insert(&entry(&p, &c, "w1")), Err(Error::Constraint(_))));
    assert_eq!(ids(s.outbox_pending(&p.id).expect("pending")), ["w1", "w2", "w3"]);

    s.outbox_mark_in_flight("w1").expect("in flight");
    s.outbox_mark_in_flight("w1").expect("resend");
    let w1 = s.outbox_get("w1").expect("get").expect("some");
    assert_eq!(w1.state, OutboxState::InFlight);
    assert_eq!(w1.attempts, 2);
    assert_eq!(w1.payload, json!({"text": "w1", "reply_to": null}));
    // In flight still counts as pending, in original order.
    assert_eq!(ids(s.outbox_pending(&p.id).expect("pending")), ["w1", "w2", "w3"]);

    s.outbox_mark_in_flight("w2").expect("w2 in flight");
    assert_eq!(s.outbox_requeue_in_flight(&p.id).expect("requeue"), 2);
    assert_eq!(s.outbox_get("w2").expect("get").expect("some").state, OutboxState::Pending);

    assert!(s.outbox_confirm("w1").expect("confirm"));
    assert!(s.outbox_confirm("w1").expect("idempotent"));
    assert!(!s.outbox_confirm("unknown").expect("unknown ack"));
    assert_eq!(ids(s.outbox_pending(&p.id).expect("pending")), ["w2", "w3"]);
    assert!(matches!(s.outbox_mark_in_flight("w1"), Err(Error::InvalidState { .. })));
    assert!(matches!(s.outbox_fail("w1", "x"), Err(Error::InvalidState { .. })));
    assert!(matches!(s.outbox_retry("w1"), Err(Error::InvalidState { .. })));

    s.outbox_fail("w2", "413 too large").expect("fail");
    let w2 = s.outbox_get("w2").expect("get").expect("some");
    assert_eq!((w2.state, w2.last_error.as_deref()), (OutboxState::Failed, Some("413 too large")));
    assert_eq!(ids(s.outbox_pending(&p.id).expect("pending")), ["w3"]);
    assert_eq!(ids(s.outbox_failed(&p.id).expect("failed")), ["w2"]);
    assert!(matches!(s.outbox_mark_in_flight("w2"), Err(Error::InvalidState { .. })));

    s.outbox_retry("w2").expect("retry");
    // Retried entry keeps its id and original position.
    assert_eq!(ids(s.outbox_pending(&p.id).expect("pending")), ["w2", "w3"]);

    s.outbox_note_error("w3", "socket closed").expect("note");
    assert_eq!(s.outbox_get("w3").expect("get").expect("some").last_error.as_deref(), Some("socket closed"));

    assert_eq!(s.outbox_purge_confirmed(i64::MAX).expect("purge"), 1);
    assert_eq!(s.outbox_get("w1").expect("get"), None);
    assert!(s.outbox_delete("w3").expect("delete"));
    assert!(!s.outbox_delete("w3").expect("delete again"));

    for missing in [s.outbox_mark_in_flight("zz"), s.outbox_fail("zz", "e"), s.outbox_retry("zz")] {
        assert!(matches!(missing, Err(Error::NotFound(_))));
    }
}

#[test]
fn outbox_seq_is_monotonic_even_after_deleting_the_newest() {
    let s = store();
    let (p, c) = setup_v3(&s);
    let a = s.outbox_insert(&entry(&p, &c, "a")).expect("a");
    let b = s.outbox_insert(&entry(&p, &c, "b")).expect("b");
    assert!(s.outbox_delete("b").expect("delete"));
    let c2 = s.outbox_insert(&entry(&p, &c, "c")).expect("c");
    assert!(a.seq < b.seq && b.seq < c2.seq, "{} {} {}", a.seq, b.seq, c2.seq);
}

#[test]
fn outbox_is_per_profile_and_validates_refs() {
    let s = store();
    let (p, c) = setup_v3(&s);
    let (p2, c2) = setup_v3(&s);
    s.outbox_insert(&entry(&p, &c, "x")).expect("x");
    s.outbox_insert(&entry(&p2, &c2, "y")).expect("y");
    s.outbox_mark_in_flight("y").expect("y");
    assert_eq!(s.outbox_requeue_in_flight(&p.id).expect("requeue"), 0);
    assert_eq!(s.outbox_pending(&p.id).expect("p").len(), 1);
    assert_eq!(s.outbox_pending(&p2.id).expect("p2")[0].id, "y");
    let mut bad = entry(&p, &c, "z");
    bad.profile_id = "ghost".into();
    assert!(matches!(s.outbox_insert(&bad), Err(Error::Constraint(_))));
}

#[test]
fn message_and_outbox_commit_together_or_not_at_all() {
    let s = store();
    let (p, c) = setup_v3(&s);
    let m = msg(&c.id, Direction::Up, "atomic", 1);
    let r = s.atomically(|s| {
        s.message_upsert(&m)?;
        s.outbox_insert(&entry(&p, &c, &m.id))?;
        s.outbox_insert(&entry(&p, &c, &m.id)) // duplicate id: fails
    });
    assert!(matches!(r, Err(Error::Constraint(_))));
    assert_eq!(s.message_get(&m.id).expect("get"), None);
    assert_eq!(s.outbox_get(&m.id).expect("get"), None);
    s.atomically(|s| {
        s.message_upsert(&m)?;
        s.outbox_insert(&entry(&p, &c, &m.id))
    })
    .expect("commit");
    assert!(s.message_get(&m.id).expect("get").is_some());
    assert!(s.outbox_get(&m.id).expect("get").is_some());
}

// ------------------------------------------------------------------- media

fn media(profile: &str, id: &str, path: &str, sha: &str) -> MediaEntry {
    MediaEntry {
        id: id.into(),
        profile_id: profile.into(),
        message_id: None,
        path: path.into(),
        sha256: sha.into(),
        mime: "image/png".into(),
        size: 1234,
        filename: Some("cat.png".into()),
        origin: MediaOrigin::Received,
        created_at: 77,
    }
}

#[test]
fn media_index_lookup_by_id_sha_and_message() {
    let s = store();
    let (p, c) = setup_v3(&s);
    let (p2, _) = setup_v3(&s);
    let sha = "0f".repeat(32);
    let a = media(&p.id, "a", "2024/a.png", &sha);
    s.media_insert(&a).expect("a");
    s.media_insert(&media(&p2.id, "b", "b.png", &sha)).expect("b");
    s.media_insert(&media(&p.id, "c", "c.png", &"11".repeat(32))).expect("c");
    assert_eq!(s.media_get("a").expect("get"), Some(a.clone()));
    assert_eq!(s.media_get("zz").expect("get"), None);
    assert_eq!(s.media_by_sha256(&sha, None).expect("sha").len(), 2);
    assert_eq!(s.media_by_sha256(&sha.to_uppercase(), Some(&p.id)).expect("sha"), vec![a]);
    assert!(matches!(s.media_insert(&media(&p.id, "a", "x.png", &sha)), Err(Error::Constraint(_))));
    assert!(matches!(s.media_insert(&media(&p.id, "d", "/abs.png", &sha)), Err(Error::InvalidInput(_))));
    assert!(matches!(s.media_insert(&media(&p.id, "d", "../up.png", &sha)), Err(Error::InvalidInput(_))));
    assert!(matches!(s.media_insert(&media(&p.id, "d", "x.png", "nothex")), Err(Error::InvalidInput(_))));
    assert!(matches!(s.media_insert(&media("ghost", "d", "x.png", &sha)), Err(Error::Constraint(_))));

    let m = msg(&c.id, Direction::Up, "", 1);
    s.media_set_message("a", Some(&m.id)).expect("link");
    assert_eq!(s.media_for_message(&m.id).expect("for msg").len(), 1);
    s.media_set_message("a", None).expect("unlink");
    assert!(s.media_for_message(&m.id).expect("for msg").is_empty());
    assert!(matches!(s.media_set_message("zz", None), Err(Error::NotFound(_))));
    assert!(s.media_delete("a").expect("delete"));
    assert!(!s.media_delete("a").expect("delete"));
}

// ------------------------------------------------------------------ search

#[test]
fn search_ranks_filters_and_marks() {
    let s = store();
    let (p, c) = setup_v3(&s);
    let (p2, c2) = setup_v3(&s);
    let weak =
        msg(&c.id, Direction::Down, "a long message that mentions kubernetes once among many other words here", 1);
    let strong = msg(&c.id, Direction::Up, "kubernetes kubernetes", 2);
    let elsewhere = msg(&c2.id, Direction::Down, "kubernetes in another profile", 3);
    for m in [&weak, &strong, &elsewhere] {
        s.message_upsert(m).expect("upsert");
    }
    let all = s.search("kubernetes", &SearchOptions::default()).expect("search");
    assert_eq!(all.len(), 3);
    assert_eq!(all[0].message_id, strong.id, "bm25: denser match first");
    assert!(all.windows(2).all(|w| w[0].rank <= w[1].rank));

    let opts = SearchOptions {
        profile_id: Some(p.id.clone()),
        open_marker: "<b>".into(),
        close_marker: "</b>".into(),
        ..Default::default()
    };
    let mine = s.search("KUBERNETES", &opts).expect("search");
    assert_eq!(mine.len(), 2);
    assert!(mine.iter().all(|h| h.profile_id == p.id && h.conversation_id == c.id));
    assert!(mine[0].snippet.contains("<b>kubernetes</b>"), "{}", mine[0].snippet);
    assert_eq!(mine[0].created_at, 2);
    let theirs =
        s.search("kube", &SearchOptions { profile_id: Some(p2.id.clone()), ..Default::default() }).expect("prefix");
    assert_eq!(theirs.len(), 1);
    assert_eq!(theirs[0].message_id, elsewhere.id);
    assert!(theirs[0].snippet.contains("[kubernetes]"), "{}", theirs[0].snippet);

    // All words must match (AND).
    assert_eq!(s.search("kubernetes profile", &SearchOptions::default()).expect("and").len(), 1);
    // Limit.
    assert_eq!(s.search("kubernetes", &SearchOptions { limit: 1, ..Default::default() }).expect("lim").len(), 1);
    // Diacritics folded.
    s.message_upsert(&msg(&c.id, Direction::Down, "café crème", 4)).expect("upsert");
    assert_eq!(s.search("cafe", &SearchOptions::default()).expect("fold").len(), 1);
}

/// The seeds' own languages: Chinese and Japanese without spaces, Russian with and without ё, English, and runs of
/// scripts glued together. Each query lists the corpus lines it must find, and no others.
#[test]
fn search_finds_words_in_chinese_japanese_russian_and_mixed_runs() {
    let s = store();
    let (_, c) = setup_v3(&s);
    let corpus = [
        "请帮我把报告转换成PDF格式",            // 0 zh, Latin glued to Han
        "明天的会议资料已经发到你的邮箱了",     // 1 zh
        "会議の資料を明日までに送ってください", // 2 ja: kanji + kana
        "カタカナのテストです",                 // 3 ja katakana
        "Пришлите, пожалуйста, отчёт за май",   // 4 ru with ё
        "Отчет готов, проверьте ЁЛКУ",          // 5 ru without ё, ё in capitals
        "Мой номер в гостинице",                // 6 ru й
        "Please send the report as a PDF",      // 7 en
        "deploy到production环境",               // 8 mixed en/zh, no spaces
        "ＦＵＬＬ-width ｶﾀｶﾅ text",             // 9 full-width Latin, half-width kana
    ];
    let ids: Vec<String> = corpus
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let m = msg(&c.id, Direction::Down, text, i as i64 + 1);
            s.message_upsert(&m).expect("upsert");
            m.id
        })
        .collect();
    let find = |q: &str, prefix_last: bool| -> Vec<usize> {
        let mut v: Vec<usize> = s
            .search(q, &SearchOptions { prefix_last, ..Default::default() })
            .unwrap_or_else(|e| panic!("{q}: {e}"))
            .iter()
            .map(|h| ids.iter().position(|id| *id == h.message_id).expect("known id"))
            .collect();
        v.sort_unstable();
        v
    };
    let cases: &[(&str, bool, &[usize])] = &[
        ("报告", false, &[0]),
        ("PDF", false, &[0, 7]),
        ("pdf格式", false, &[0]),
        ("报告转换", false, &[0]),
        ("转换报告", false, &[]), // the characters, but not in that order
        ("报", false, &[0]),      // one character finds its run
        ("式", false, &[0]),      // the last character of a run too
        ("报", true, &[0]),       // prefix of the bigram 报告
        ("报告转", true, &[0]),   // a phrase whose last bigram is a prefix
        ("资料", false, &[1]),    // simplified: not the Japanese 資料
        ("資料", false, &[2]),
        ("会議", false, &[2]),
        ("送って", false, &[2]),
        ("カタカナ", false, &[3, 9]),
        ("отчет", false, &[4, 5]),
        ("отчёт", false, &[4, 5]),
        ("ОТЧЁТ", false, &[4, 5]),
        ("елку", false, &[5]),
        ("мой", false, &[6]),
        ("мои", false, &[]), // й is not и
        ("отч", true, &[4, 5]),
        ("report", false, &[7]),
        ("deploy", false, &[8]),
        ("production", false, &[8]),
        ("环境", false, &[8]),
        ("full", false, &[9]),
        ("width", false, &[9]),
    ];
    for &(q, prefix, want) in cases {
        assert_eq!(find(q, prefix), want, "query {q:?} (prefix_last {prefix})");
    }
    // The snippet marks the match in the text as written.
    let hit = &s.search("报告", &SearchOptions::default()).expect("search")[0];
    assert_eq!(hit.snippet, "请帮我把[报告]转换成PDF格式");
    let hit = &s.search("отчет", &SearchOptions { prefix_last: false, ..Default::default() }).expect("search");
    assert!(hit.iter().any(|h| h.snippet.contains("[отчёт]")), "{hit:?}");
    let hit = &s.search("PDF", &SearchOptions { prefix_last: false, ..Default::default() }).expect("search");
    assert!(hit.iter().any(|h| h.snippet == "请帮我把报告转换成[PDF]格式"), "{hit:?}");
    assert!(s.integrity_check().expect("check").is_empty());
}

#[test]
fn search_input_never_breaks_fts_syntax() {
    let s = store();
    let (_, c) = setup_v3(&s);
    s.message_upsert(&msg(&c.id, Direction::Down, "he said \"NEAR\" AND (or) not-this: col*", 1)).expect("upsert");
    for q in [
        "\"",
        "\"\"",
        "*",
        "AND",
        "OR NOT",
        "NEAR(a b)",
        "a:b",
        "-x",
        "(",
        ")",
        "^",
        "text:foo",
        "col*",
        "\"unterminated",
        "';DROP TABLE messages;--",
        "\u{0}",
        "日本語",
        "🙂",
    ] {
        s.search(q, &SearchOptions::default()).unwrap_or_else(|e| panic!("{q:?}: {e}"));
    }
    assert_eq!(s.search("NEAR", &SearchOptions::default()).expect("near").len(), 1);
    assert_eq!(s.search("not-this", &SearchOptions::default()).expect("hyphen").len(), 1);
    assert!(s.search("   ", &SearchOptions::default()).expect("blank").is_empty());
}

#[test]
fn search_index_follows_edits_and_deletes() {
    let s = store();
    let (_, c) = setup_v3(&s);
    let mut m = msg(&c.id, Direction::Down, "alpha", 1);
    s.message_upsert(&m).expect("upsert");
    m.text = "beta".into();
    s.message_upsert(&m).expect("edit");
    assert!(s.search("alpha", &SearchOptions::default()).expect("old").is_empty());
    assert_eq!(s.search("beta", &SearchOptions::default()).expect("new").len(), 1);
    s.message_delete(&m.id).expect("delete");
    assert!(s.search("beta", &SearchOptions::default()).expect("gone").is_empty());
    assert!(s.integrity_check().expect("check").is_empty());
}

// ------------------------------------------------------------------ export

#[test]
fn export_markdown_and_json() {
    let s = store();
    let (p, c) = setup_v3(&s);
    s.media_insert(&media(&p.id, "img1", "2024/cat.png", &"ab".repeat(32))).expect("media");
    let mut q = msg(&c.id, Direction::Up, "Show me a cat", 1_700_000_000_000);
    q.attachments = vec!["img1".into()];
    let mut a = msg(&c.id, Direction::Down, "Here is a cat.\nMeow.", 1_700_000_060_000);
    a.error = Some(MessageError { code: "rate".into(), text: "slow down".into() });
    s.message_upsert(&a).expect("a");
    s.message_upsert(&q).expect("q");

    let md = s.export_markdown(&c.id).expect("md");
    assert!(md.starts_with("# Chat\n"), "{md}");
    let qpos = md.find("**You** · 2023-11-14 22:13:20 UTC").expect("question header");
    let apos = md.find("**Agent** · 2023-11-14 22:14:20 UTC").expect("answer header");
    assert!(qpos < apos, "oldest first");
    assert!(md.contains("Show me a cat"));
    assert!(md.contains("Here is a cat.\nMeow."));
    assert!(md.contains("- cat.png (image/png, 1234 bytes)"), "{md}");
    assert!(md.contains("slow down"));

    let ex = s.export_json(&c.id).expect("json");
    assert_eq!(ex.format, EXPORT_FORMAT);
    assert_eq!(ex.messages, vec![q, a]);
    assert_eq!(ex.media.len(), 1);
    let text = serde_json::to_string(&ex).expect("ser");
    let back: ConversationExport = serde_json::from_str(&text).expect("de");
    assert_eq!(back, ex);
    // the export file's text is what it always was: the user's message "out", the agent's "in"
    let json: serde_json::Value = serde_json::from_str(&text).expect("value");
    let directions: Vec<&str> =
        json["messages"].as_array().unwrap().iter().map(|m| m["direction"].as_str().unwrap()).collect();
    assert_eq!(directions, ["out", "in"]);
    assert!(matches!(s.export_json("nope"), Err(Error::NotFound(_))));
}

/// The protocol's Direction and Dialect are the store's; the columns keep their old text (no migration).
#[test]
fn direction_and_dialect_keep_their_column_text() {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("hermes.db");
    let s = Store::open(&path).expect("open");
    let (p, c) = setup_v3(&s);
    s.message_upsert(&msg(&c.id, Direction::Up, "mine", 1)).expect("up");
    s.message_upsert(&msg(&c.id, Direction::Down, "theirs", 2)).expect("down");
    let raw = rusqlite::Connection::open(&path).expect("open");
    let mut st = raw.prepare("SELECT direction, text FROM messages ORDER BY created_at").expect("prep");
    let rows: Vec<(String, String)> =
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).expect("q").map(Result::unwrap).collect();
    assert_eq!(rows, [("out".to_string(), "mine".to_string()), ("in".to_string(), "theirs".to_string())]);
    let dialect: String =
        raw.query_row("SELECT dialect FROM profiles WHERE id = ?1", [&p.id], |r| r.get(0)).expect("dialect");
    assert_eq!(dialect, "v3");
    let page = s.page(&c.id, None, 10).expect("page");
    assert_eq!(page.messages.iter().map(|m| m.direction).collect::<Vec<_>>(), [Direction::Down, Direction::Up]);
    assert_eq!(s.profile_get(&p.id).expect("profile").expect("exists").dialect, hermes_store::Dialect::V3);
}

// -------------------------------------------------------------- data folder

#[test]
fn data_dir_helpers() {
    let d = std::path::Path::new("/tmp/hermes-x");
    assert_eq!(resolve_data_dir(Some(d)).expect("override"), d);
    assert_eq!(media_dir(d), d.join("media"));
    if let Some(def) = default_data_dir() {
        assert!(def.to_string_lossy().contains("hermes-desktop"), "{def:?}");
        assert_eq!(resolve_data_dir(None).expect("default"), def);
    }
    // open_in creates nested folders.
    let tmp = tempfile::tempdir().expect("tmp");
    let nested = tmp.path().join("a/b");
    Store::open_in(&nested).expect("open");
    assert!(nested.join("hermes.sqlite3").is_file());
}

#[test]
fn garbage_file_is_a_clear_corrupt_error() {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("hermes.sqlite3");
    std::fs::write(&path, vec![0x42u8; 8192]).expect("write");
    match Store::open(&path) {
        Err(Error::Corrupt(_)) => {}
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn database_from_newer_app_is_refused() {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("db.sqlite3");
    drop(Store::open(&path).expect("create"));
    {
        let c = rusqlite::Connection::open(&path).expect("raw");
        c.pragma_update(None, "user_version", schema::LATEST_VERSION + 5).expect("bump");
    }
    assert!(matches!(Store::open(&path), Err(Error::TooNew { .. })));
}

#[test]
fn disk_full_is_an_error_not_a_panic() {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("db.sqlite3");
    let s = Store::open(&path).expect("open");
    let (_, c) = setup_v3(&s);
    // Cap the file at its current size: the next page allocation hits SQLITE_FULL.
    let pages: i64 = {
        let raw = rusqlite::Connection::open(&path).expect("raw");
        raw.query_row("PRAGMA page_count", [], |r| r.get(0)).expect("count")
    };
    s.set_max_page_count(pages).expect("cap");
    let big = "x".repeat(64 * 1024);
    let mut result = Ok(());
    for i in 0..64 {
        result = s.message_upsert(&msg(&c.id, Direction::Down, &big, i));
        if result.is_err() {
            break;
        }
    }
    assert!(matches!(result, Err(Error::DiskFull)), "{result:?}");
    // Still usable for reads afterwards, and nothing half-written.
    assert!(s.integrity_check().expect("check").is_empty());
}
