//! The app layer over a real SQLite store in a temporary folder: history pages and their cursors, conversation
//! summaries, profile checks, and the configuration a connection starts with.

use hermes_app::{App, ConnectOptions, Error, ExportFormat, MessageState, ProfileInput};
use hermes_client::Secret;
use hermes_client::policy::UrlError;
use hermes_store::{Card, Dialect, Direction, MediaEntry, MediaOrigin, Message, NewProfile};

const T0: i64 = 1_700_000_000_000;

fn app() -> (tempfile::TempDir, App) {
    let dir = tempfile::tempdir().unwrap();
    let app = App::open(dir.path()).unwrap();
    (dir, app)
}

fn card(conversation_id: &str, id: &str, at: i64) -> Card {
    Card {
        conversation_id: conversation_id.into(),
        id: id.into(),
        kind: "exec_approval".into(),
        text: format!("card {id}"),
        options: serde_json::json!([{"id": "once", "label": "Allow once", "style": "primary"}]),
        command: Some("ls".into()),
        description: None,
        timeout_seconds: Some(60),
        created_at: at,
        done: None,
    }
}

fn input(name: &str, url: &str, dialect: Dialect) -> ProfileInput {
    ProfileInput {
        name: name.into(),
        url: url.into(),
        dialect,
        user_id: None,
        allow_insecure_ws: false,
        avatar_url_override: None,
    }
}

/// Twenty-five messages one second apart, read ten at a time: every message once, newest first, each card in the
/// page whose stretch of time it was shown in, and the cursor handed back as the page gave it.
#[test]
fn history_pages_walk_back_with_their_cards() {
    let (_dir, app) = app();
    let p = app.create_profile(&input("Hermes", "ws://127.0.0.1:8787/ws", Dialect::Adapter)).unwrap();
    let conv = app.conversations(&p.id).unwrap().remove(0);
    let at = |i: i64| T0 + i * 1000;
    app.with_store(|s| {
        for i in 0..25 {
            let dir = if i % 2 == 0 { Direction::Down } else { Direction::Up };
            let mut m = Message::new(&conv.id, dir, &format!("m{i}"), at(i));
            if i == 3 {
                for (id, mime) in [("pic", "image/png"), ("doc", "application/x-unknown")] {
                    s.media_insert(&MediaEntry {
                        id: id.into(),
                        profile_id: p.id.clone(),
                        message_id: None,
                        path: format!("2026/{id}.bin"),
                        sha256: "a".repeat(64),
                        mime: mime.into(),
                        size: 42,
                        filename: None,
                        origin: MediaOrigin::Received,
                        created_at: at(i),
                    })?;
                    m.attachments.push(id.into());
                }
            }
            s.message_upsert(&m)?;
        }
        // before every message; between m7 and m8; in m15's millisecond (page 1's oldest); just before it; after all
        for (id, t) in [("first", at(0) - 1), ("mid", at(7) + 500), ("edge", at(15)), ("before-edge", at(15) - 1)] {
            s.card_insert(&card(&conv.id, id, t))?;
        }
        s.card_insert(&card(&conv.id, "last", at(30)))
    })
    .unwrap();

    let texts = |page: &hermes_app::HistoryPage| page.messages.iter().map(|m| m.text.clone()).collect::<Vec<_>>();
    let cards = |page: &hermes_app::HistoryPage| page.cards.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
    let expect = |from: i64, to: i64| (from..=to).rev().map(|i| format!("m{i}")).collect::<Vec<_>>();

    let p1 = app.history(&conv.id, None, 10).unwrap();
    assert_eq!(texts(&p1), expect(15, 24));
    assert_eq!(cards(&p1), ["edge", "last"]);
    assert_eq!(p1.messages[0].created_at, at(24), "times are milliseconds");
    let next = p1.next.clone().expect("an older page");

    let p2 = app.history(&conv.id, Some(&next), 10).unwrap();
    assert_eq!(texts(&p2), expect(5, 14));
    assert_eq!(cards(&p2), ["mid", "before-edge"]);
    // the same cursor gives the same page again (nothing is remembered between calls)
    assert_eq!(app.history(&conv.id, Some(&next), 10).unwrap(), p2);

    let p3 = app.history(&conv.id, p2.next.as_deref(), 10).unwrap();
    assert_eq!(texts(&p3), expect(0, 4));
    assert_eq!(cards(&p3), ["first"]);
    assert_eq!(p3.next, None, "the oldest page");

    // the joined files, and who wrote what
    let m3 = p3.messages.iter().find(|m| m.text == "m3").unwrap();
    let kinds: Vec<_> = m3.attachments.iter().map(|a| (a.media_id.as_str(), a.kind.as_str())).collect();
    assert_eq!(kinds, [("pic", "image"), ("doc", "document")]);
    assert!(m3.attachments[0].path.starts_with(&app.media_dir().display().to_string()));
    assert_eq!(m3.attachments[0].filename, "pic.bin");
    assert_eq!(m3.state, MessageState::Queued, "an outgoing message not yet sent");
    assert_eq!(p3.messages.iter().find(|m| m.text == "m4").unwrap().state, MessageState::Received);

    // a card answered later shows its outcome on its page
    app.with_store(|s| s.card_done(&p.id, "mid", Some("once"), false)).unwrap();
    let again = app.history(&conv.id, Some(&next), 10).unwrap();
    let done = again.cards[0].done.as_ref().expect("an outcome");
    assert_eq!((done.option_id.as_deref(), done.expired), (Some("once"), false));
}

#[test]
fn a_deleted_profile_takes_its_avatar_picture_along() {
    let (dir, app) = app();
    let p = app.create_profile(&input("Hermes", "ws://127.0.0.1:8787/ws", Dialect::Adapter)).unwrap();
    let other = app.create_profile(&input("Other", "ws://127.0.0.1:8788/ws", Dialect::Adapter)).unwrap();
    let pic = hermes_app::picture::Picture { bytes: vec![0xff, 0xd8, 0xff], png: false };
    hermes_app::picture::save(dir.path(), &p.id, &pic).unwrap();
    hermes_app::picture::save(dir.path(), &other.id, &pic).unwrap();
    app.delete_profile(&p.id).unwrap();
    assert_eq!(hermes_app::picture::load(dir.path(), &p.id), None);
    assert_eq!(hermes_app::picture::load(dir.path(), &other.id), Some(pic), "another profile's stays");
}

#[test]
fn a_cursor_no_page_gave_is_refused() {
    let (_dir, app) = app();
    let p = app.create_profile(&input("Hermes", "ws://127.0.0.1:8787/ws", Dialect::Adapter)).unwrap();
    let conv = app.conversations(&p.id).unwrap().remove(0);
    for bad in ["a-message-id", "12", "x:1"] {
        let e = app.history(&conv.id, Some(bad), 10).unwrap_err();
        assert!(matches!(e, Error::BadCursor), "{bad}: {e:?}");
    }
    // an empty conversation is one empty page
    let empty = app.history(&conv.id, None, 10).unwrap();
    assert!(empty.messages.is_empty() && empty.cards.is_empty() && empty.next.is_none());
}

#[test]
fn conversation_summaries_carry_drafts_and_unread_counts() {
    let (_dir, app) = app();
    let p = app.create_profile(&input("Gateway", "wss://hermes.example/ws/app", Dialect::V3)).unwrap();
    assert!(app.conversations(&p.id).unwrap().is_empty(), "a v3 profile starts with none");
    let quiet = app.create_conversation(&p.id, "  Quiet  ").unwrap();
    assert_eq!(quiet.title, "Quiet");
    let busy = app.create_conversation(&p.id, "Busy").unwrap();
    app.set_draft(&quiet.id, "half a thought").unwrap();
    // (a minute ahead of the clock: the conversation that had them is the most recently active, whatever the clock)
    let later = hermes_store::now_ms() + 60_000;
    app.with_store(|s| {
        for i in 0..3 {
            s.message_upsert(&Message::new(&busy.id, Direction::Down, &format!("hi {i}"), later + i))?;
        }
        s.message_upsert(&Message::new(&busy.id, Direction::Up, "mine", later + 10))
    })
    .unwrap();

    let list = app.conversations(&p.id).unwrap();
    let get = |id: &str| list.iter().find(|c| c.id == id).unwrap().clone();
    assert_eq!((get(&quiet.id).draft.as_deref(), get(&quiet.id).unread), (Some("half a thought"), 0));
    let b = get(&busy.id);
    assert_eq!((b.draft, b.unread), (None, 3), "the agent's messages count, the user's own do not");
    assert_eq!(b.preview.as_deref(), Some("mine"));
    assert_eq!(b.updated_at, later + 10, "its newest message's time, in milliseconds");
    assert_eq!(list[0].id, busy.id, "most recently active first");

    app.mark_read(&busy.id).unwrap();
    app.set_draft(&quiet.id, "").unwrap();
    let list = app.conversations(&p.id).unwrap();
    assert!(list.iter().all(|c| c.unread == 0 && c.draft.is_none()), "{list:?}");

    // an adapter profile has its one conversation as soon as it is listed
    let a = app.create_profile(&input("Adapter", "ws://127.0.0.1:8787/ws", Dialect::Adapter)).unwrap();
    let convs = app.conversations(&a.id).unwrap();
    assert_eq!(convs.len(), 1);
    assert_eq!(app.conversations(&a.id).unwrap(), convs, "and only one");
}

#[test]
fn profile_input_is_checked_and_trimmed() {
    let (_dir, app) = app();
    let e = app.create_profile(&input("   ", "ws://127.0.0.1:8787/ws", Dialect::Adapter)).unwrap_err();
    assert!(matches!(e, Error::NameMissing), "{e:?}");
    let e = app.create_profile(&input("Hermes", "ws://hermes.example.com/ws", Dialect::Adapter)).unwrap_err();
    assert!(matches!(e, Error::InvalidUrl(UrlError::InsecurePublic(ref h)) if h == "hermes.example.com"), "{e:?}");
    let e = app.create_profile(&input("Hermes", "https://hermes.example.com/ws", Dialect::Adapter)).unwrap_err();
    assert!(matches!(e, Error::InvalidUrl(UrlError::Scheme(ref s)) if s == "https"), "{e:?}");
    let e = app.create_profile(&input("Hermes", "ws://127.0.0.1:8787/ws?token=x", Dialect::Adapter)).unwrap_err();
    assert!(matches!(e, Error::InvalidUrl(UrlError::TokenInUrl)), "{e:?}");
    assert!(app.profiles().unwrap().is_empty(), "nothing refused was kept");

    // allowed explicitly, a public ws:// is accepted; text fields are trimmed, blank optional ones are none
    let mut ok = input("  Hermes  ", " ws://hermes.example.com/ws ", Dialect::V3);
    ok.allow_insecure_ws = true;
    ok.user_id = Some("   ".into());
    ok.avatar_url_override = Some(" https://a.example/me.png ".into());
    let p = app.create_profile(&ok).unwrap();
    assert_eq!((p.name.as_str(), p.url.as_str()), ("Hermes", "ws://hermes.example.com/ws"));
    assert_eq!((p.v3_user_id, p.avatar_url.as_deref()), (None, Some("https://a.example/me.png")));

    // an edit is checked the same way, and the dialect stays
    let e = app.update_profile(&p.id, &input("", "wss://hermes.example.com/ws", Dialect::V3)).unwrap_err();
    assert!(matches!(e, Error::NameMissing), "{e:?}");
    let upd = app.update_profile(&p.id, &input("Renamed", "wss://hermes.example.com/ws", Dialect::V3)).unwrap();
    assert_eq!((upd.name.as_str(), upd.dialect, upd.allow_insecure_ws), ("Renamed", Dialect::V3, false));
    let e = app.profile("nobody").unwrap_err();
    assert!(matches!(e, Error::NotFound("the profile")), "{e:?}");
}

#[test]
fn an_adapter_connection_talks_in_the_profiles_one_conversation() {
    let (dir, app) = app();
    let p = app.create_profile(&input("Hermes", "ws://127.0.0.1:8787/ws", Dialect::Adapter)).unwrap();
    // a session asked for is not the adapter's to choose: it has one conversation
    let opts = ConnectOptions { session: Some("ignored".into()), ..ConnectOptions::default() };
    let prepared = app.prepare(&p, Secret::new("t0ken"), &opts).unwrap();
    let cfg = &prepared.config;
    assert_eq!(prepared.conversation.session, hermes_store::adapter_session(&p.device_id));
    assert_eq!(app.conversations(&p.id).unwrap().len(), 1);
    assert_eq!((cfg.url.as_str(), cfg.dialect), ("ws://127.0.0.1:8787/ws", hermes_protocol::Dialect::Adapter));
    assert_eq!(cfg.device.id, p.device_id);
    assert_eq!(cfg.default_session, prepared.conversation.session);
    assert_eq!(cfg.token.expose(), "t0ken");
    assert_eq!((cfg.media_dir.as_path(), cfg.outbox_dir.as_path()), (app.media_dir(), &*dir.path().join("outbox")));
    assert_eq!(cfg.media_dir, dir.path().join("media"));
    assert_eq!((cfg.user_id.as_deref(), cfg.allow_insecure_ws), (None, false));
    let default_max = cfg.max_download_bytes;

    // our own media limits: 64 MiB per file and a 2 GiB media folder unless set
    assert_eq!((cfg.max_media_bytes, cfg.media_quota_bytes), (64 << 20, 2 << 30));

    let opts = ConnectOptions {
        allow_insecure_ws: true,
        max_download_bytes: Some(1024),
        max_media_bytes: Some(2048),
        media_quota_bytes: Some(4096),
        ..ConnectOptions::default()
    };
    let again = app.prepare(&p, Secret::new("t0ken"), &opts).unwrap();
    assert_eq!(again.conversation.id, prepared.conversation.id, "the same conversation every time");
    assert_eq!((again.config.allow_insecure_ws, again.config.max_download_bytes), (true, 1024));
    assert_eq!((again.config.max_media_bytes, again.config.media_quota_bytes), (2048, 4096));
    assert_ne!(default_max, 1024);
}

#[test]
fn a_v3_connection_opens_the_latest_conversation_or_the_session_asked_for() {
    let (_dir, app) = app();
    let mut v3 = input("Gateway", "wss://hermes.example/ws/app", Dialect::V3);
    v3.user_id = Some("alice".into());
    let p = app.create_profile(&v3).unwrap();

    // none yet: one is created
    let first = app.prepare(&p, Secret::new("jwt"), &ConnectOptions::default()).unwrap();
    assert_eq!(first.conversation.title, hermes_app::NEW_CONVERSATION_TITLE);
    assert_eq!(first.config.dialect, hermes_protocol::Dialect::V3);
    assert_eq!(first.config.default_session, first.conversation.session);
    assert_eq!(first.config.user_id.as_deref(), Some("alice"), "the profile's user id");
    assert_eq!(
        app.prepare(&p, Secret::new("jwt"), &ConnectOptions::default()).unwrap().conversation,
        first.conversation
    );

    // a session asked for by name: created with it once, found again after
    let opts = ConnectOptions {
        session: Some("6f1c2b1e-0000-4000-8000-000000000001".into()),
        new_title: Some("hermes-chat".into()),
        user_id: Some("bob".into()),
        ..ConnectOptions::default()
    };
    let named = app.prepare(&p, Secret::new("jwt"), &opts).unwrap();
    assert_eq!(named.conversation.session, "6f1c2b1e-0000-4000-8000-000000000001");
    assert_eq!(named.conversation.title, "hermes-chat");
    assert_eq!(named.config.default_session, named.conversation.session);
    assert_eq!(named.config.user_id.as_deref(), Some("bob"), "the front end's user id wins");
    assert_eq!(app.prepare(&p, Secret::new("jwt"), &opts).unwrap().conversation.id, named.conversation.id);
    assert_eq!(app.conversations(&p.id).unwrap().len(), 2);
}

#[test]
fn a_device_profile_is_found_again_by_url_and_device() {
    let (_dir, app) = app();
    let new = NewProfile::adapter("hermes-chat desktop-1", "ws://127.0.0.1:8787/ws");
    let p = app.device_profile(&new, "desktop-0123456789abcdef").unwrap();
    assert_eq!(p.device_id, "desktop-0123456789abcdef");
    assert_eq!(app.device_profile(&new, "desktop-0123456789abcdef").unwrap().id, p.id);
    let other = app.device_profile(&new, "desktop-fedcba9876543210").unwrap();
    assert_ne!(other.id, p.id, "another device is another profile");
    assert_eq!(app.profiles().unwrap().len(), 2);
}

#[test]
fn search_and_export_read_the_same_store() {
    let (_dir, app) = app();
    let p = app.create_profile(&input("Hermes", "ws://127.0.0.1:8787/ws", Dialect::Adapter)).unwrap();
    let conv = app.conversations(&p.id).unwrap().remove(0);
    app.rename_conversation(&conv.id, " Plans: a/b? ").unwrap();
    app.with_store(|s| s.message_upsert(&Message::new(&conv.id, Direction::Down, "the meeting is at noon", T0)))
        .unwrap();
    let hits = app.search("meet", Some(p.id.clone())).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!((hits[0].conversation_id.as_str(), hits[0].created_at), (conv.id.as_str(), T0));
    assert!(app.search("meet", Some("another".into())).unwrap().is_empty());

    let md = app.export(&conv.id, ExportFormat::Markdown).unwrap();
    assert!(md.body.contains("the meeting is at noon"));
    assert_eq!(md.file_name, "b_.md", "the title's last path part, made safe");
    let json = app.export(&conv.id, ExportFormat::Json).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json.body).unwrap();
    assert_eq!(v["messages"][0]["text"], "the meeting is at noon");
    assert!(json.file_name.ends_with(".json"));
}
