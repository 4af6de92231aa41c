//! Migrations: from an empty file and from every earlier schema version to the latest.
//!
//! When you add migration N+1, add `FIXTURES[N]`: SQL written against schema version N+1 that
//! inserts representative rows, and extend `check_fixture` so the data is verified after the
//! upgrade to the latest version. The test fails if a version has no fixture.

use hermes_store::{schema, *};
use rusqlite::Connection;

/// `FIXTURES[i]`: data inserted right after migrating to version `i + 1`.
const FIXTURES: &[&str] = &[
    // v1
    r#"
    INSERT INTO profiles (id, name, url, dialect, device_id, v3_user_id, allow_insecure_ws,
                          avatar_url, has_token, created_at)
    VALUES ('fx-p1', 'Fixture v1', 'ws://127.0.0.1:9', 'v3', 'desktop-00112233445566ff', 'u1',
            1, NULL, 1, 1000);
    INSERT INTO conversations (id, profile_id, title, session, created_at, updated_at)
    VALUES ('fx-c1', 'fx-p1', 'Old chat', '6b2c7f2e-6b1a-4a8e-9c55-1f7b1d0e2a31', 1000, 1000);
    INSERT INTO messages (id, conversation_id, server_id, direction, text, assembly, edit_count,
                          delivery, created_at, updated_at, attachments)
    VALUES ('fx-m1', 'fx-c1', 's1', 'out', 'fixture zebra question', 'final', 0, 'delivered',
            2000, 2000, '["fx-media1"]'),
           ('fx-m2', 'fx-c1', NULL, 'in', 'fixture zebra answer', 'streaming', 0, NULL,
            3000, 3000, '[]');
    INSERT INTO outbox (id, profile_id, conversation_id, kind, payload, state, attempts,
                        created_at, updated_at)
    VALUES ('fx-o1', 'fx-p1', 'fx-c1', 'text', '{"text":"queued before upgrade"}', 'in_flight',
            1, 2500, 2500);
    INSERT INTO media (id, profile_id, message_id, path, sha256, mime, size, filename, origin,
                       created_at)
    VALUES ('fx-media1', 'fx-p1', 'fx-m1', 'fx/a.png',
            'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'image/png', 10,
            'a.png', 'sent', 1500);
    "#,
    // v2
    r#"
    INSERT INTO profiles (id, name, url, dialect, device_id, v3_user_id, allow_insecure_ws,
                          avatar_url, has_token, created_at)
    VALUES ('fx-p2', 'Fixture v2', 'ws://127.0.0.1:9', 'adapter', 'desktop-00112233445566aa', NULL,
            1, NULL, 0, 4000);
    INSERT INTO conversations (id, profile_id, title, session, created_at, updated_at)
    VALUES ('fx-c2', 'fx-p2', 'Chat', 'mobile:desktop-00112233445566aa', 4000, 4000);
    INSERT INTO drafts (conversation_id, text, updated_at) VALUES ('fx-c2', 'an unsent line', 4500);
    "#,
    // v3
    r#"
    INSERT INTO profiles (id, name, url, dialect, device_id, v3_user_id, allow_insecure_ws,
                          avatar_url, has_token, created_at)
    VALUES ('fx-p3', 'Fixture v3', 'ws://127.0.0.1:9', 'adapter', 'desktop-00112233445566bb', NULL,
            1, NULL, 0, 5000);
    INSERT INTO conversations (id, profile_id, title, session, created_at, updated_at)
    VALUES ('fx-c3', 'fx-p3', 'Chat', 'mobile:desktop-00112233445566bb', 5000, 5000);
    INSERT INTO messages (seq, id, conversation_id, server_id, direction, text, assembly, edit_count,
                          delivery, created_at, updated_at)
    VALUES (9001, 'fx-m31', 'fx-c3', 'r1', 'in', 'read before', 'final', 0, NULL, 5100, 5100),
           (9002, 'fx-m32', 'fx-c3', 'r2', 'in', 'unread one', 'final', 0, NULL, 5200, 5200),
           (9003, 'fx-m33', 'fx-c3', NULL, 'out', 'mine', 'final', 0, 'sent', 5300, 5300),
           (9004, 'fx-m34', 'fx-c3', 'r3', 'in', 'unread two', 'final', 0, NULL, 5400, 5400);
    UPDATE conversations SET read_upto = 9001 WHERE id = 'fx-c3';
    "#,
    // v4
    r#"
    INSERT INTO cards (conversation_id, id, kind, text, options, command, description, timeout_seconds, created_at,
                       done_option, done_expired)
    VALUES ('fx-c3', 'k1', 'exec_approval', 'Run it?', '[{"id":"once","label":"Allow once"}]', 'make', NULL, 300,
            5500, 'once', 0);
    "#,
    // v5
    r#"
    INSERT INTO messages (id, conversation_id, server_id, direction, text, assembly, edit_count, error_code,
                          error_text, delivery, created_at, updated_at, retry_of)
    VALUES ('fx-m51', 'fx-c3', NULL, 'out', 'try again', 'final', 0, NULL, NULL, 'delivered', 5600, 5600, 'fx-m33');
    UPDATE profiles SET home_conversation_id = 'fx-c3', paired_at = 5700 WHERE id = 'fx-p3';
    "#,
    // v6
    r#"
    INSERT INTO conversations (id, profile_id, title, session, created_at, updated_at)
    VALUES ('fx-c6', 'fx-p3', 'Chat 6', '7c3d8f3e-6b1a-4a8e-9c55-1f7b1d0e2a36', 5800, 5800);
    INSERT INTO messages (id, conversation_id, server_id, direction, text, assembly, edit_count, delivery, created_at,
                          updated_at)
    VALUES ('fx-m61', 'fx-c6', 'r6', 'in', '请帮我把报告转换成PDF格式', 'final', 0, NULL, 5800, 5800);
    "#,
];

/// Verifies, through the public API at the latest version, the data of fixture `version`.
fn check_fixture(s: &Store, version: usize) {
    match version {
        1 => {
            let p = s.profile_get("fx-p1").expect("get").expect("profile survives");
            assert_eq!(p.device_id, "desktop-00112233445566ff");
            assert_eq!(p.dialect, Dialect::V3);
            assert!(p.allow_insecure_ws && p.has_token);
            assert_eq!(s.count("fx-c1").expect("count"), 2);
            let page = s.page("fx-c1", None, 10).expect("page");
            assert_eq!(page.messages.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["fx-m2", "fx-m1"]);
            assert_eq!(page.messages[1].attachments, ["fx-media1"]);
            // Rows inserted by the fixture were indexed by the triggers (final ones only).
            let hits = s.search("zebra", &SearchOptions::default()).expect("search");
            assert_eq!(hits.iter().map(|h| h.message_id.as_str()).collect::<Vec<_>>(), ["fx-m1"]);
            let ob = s.outbox_pending("fx-p1").expect("outbox");
            assert_eq!(ob.len(), 1);
            assert_eq!(ob[0].payload["text"], "queued before upgrade");
            assert_eq!(s.media_get("fx-media1").expect("media").expect("some").message_id.as_deref(), Some("fx-m1"));
            // a conversation from before read marks were kept starts with everything read (v3)
            assert_eq!(s.unread_count("fx-c1").expect("unread"), 0);
        }
        2 => {
            assert_eq!(s.draft_get("fx-c2").expect("draft").as_deref(), Some("an unsent line"));
            // a conversation from before drafts existed has none
            assert_eq!(s.draft_get("fx-c1").expect("draft"), None);
            assert_eq!(s.unread_count("fx-c2").expect("unread"), 0);
        }
        3 => {
            assert_eq!(s.unread_count("fx-c3").expect("unread"), 2);
            s.mark_read("fx-c3").expect("mark read");
            assert_eq!(s.unread_count("fx-c3").expect("unread"), 0);
        }
        4 => {
            let k = s.card_get("fx-c3", "k1").expect("card").expect("kept");
            assert_eq!(k.command.as_deref(), Some("make"));
            assert_eq!(k.options[0]["label"], "Allow once");
            assert_eq!(k.done, Some(CardDone { option_id: Some("once".into()), expired: false }));
        }
        5 => {
            assert_eq!(s.message_get("fx-m51").expect("get").expect("kept").retry_of.as_deref(), Some("fx-m33"));
            let p = s.profile_get("fx-p3").expect("get").expect("kept");
            assert_eq!((p.home_conversation_id.as_deref(), p.paired_at), (Some("fx-c3"), Some(5700)));
            // profiles from before v5 have no home and were never seen approved
            let p2 = s.profile_get("fx-p2").expect("get").expect("kept");
            assert_eq!((p2.home_conversation_id, p2.paired_at), (None, None));
            // a deleted home conversation leaves no dangling reference
            s.conversation_delete("fx-c3").expect("delete");
            assert_eq!(s.profile_get("fx-p3").expect("get").expect("kept").home_conversation_id, None);
        }
        6 => {
            let hits = s.search("报告", &SearchOptions::default()).expect("search");
            assert_eq!(hits.iter().map(|h| h.message_id.as_str()).collect::<Vec<_>>(), ["fx-m61"]);
        }
        v => panic!("no check for fixture version {v}"),
    }
}

#[test]
fn every_migration_has_a_fixture() {
    assert_eq!(FIXTURES.len(), schema::MIGRATIONS.len(), "add a fixture (and a check) for every schema version");
    assert_eq!(schema::LATEST_VERSION as usize, schema::MIGRATIONS.len());
    schema::migrations_up_to(usize::MAX).validate().expect("migrations are valid");
}

#[test]
fn migrate_from_every_earlier_version() {
    // The raw connections below must know the search tokenizer the latest schema names.
    hermes_store::tokenizer::install();
    for start in 0..=schema::MIGRATIONS.len() {
        let tmp = tempfile::tempdir().expect("tmp");
        let path = tmp.path().join("hermes.sqlite3");
        {
            let mut conn = Connection::open(&path).expect("raw open");
            conn.pragma_update(None, "foreign_keys", true).expect("fk");
            // Walk up to `start` one version at a time, inserting each version's fixture.
            for v in 1..=start {
                schema::migrations_up_to(v).to_latest(&mut conn).expect("partial migrate");
                let uv: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).expect("uv");
                assert_eq!(uv, v as i64);
                conn.execute_batch(FIXTURES[v - 1]).expect("fixture");
            }
        }
        let s = Store::open(&path).unwrap_or_else(|e| panic!("upgrade from v{start}: {e}"));
        assert_eq!(s.schema_version().expect("version"), schema::LATEST_VERSION);
        assert!(s.integrity_check().expect("check").is_empty(), "from v{start}");
        for v in 1..=start {
            check_fixture(&s, v);
        }
        // The upgraded database is fully writable.
        let p = s
            .profile_create(&NewProfile {
                name: "new".into(),
                url: "ws://x".into(),
                dialect: Dialect::Adapter,
                v3_user_id: None,
                allow_insecure_ws: false,
                avatar_url: None,
            })
            .expect("write after upgrade");
        let c = s.conversation_for_adapter(&p.id).expect("conversation");
        s.message_upsert(&Message::new(&c.id, Direction::Down, "post-upgrade", 1)).expect("msg");
        drop(s);
        // Reopening at the latest version is a no-op.
        let s = Store::open(&path).expect("reopen");
        assert_eq!(s.count(&c.id).expect("count"), 1);
    }
}

#[test]
fn empty_file_gets_full_schema() {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("empty.sqlite3");
    std::fs::write(&path, b"").expect("empty file");
    let s = Store::open(&path).expect("open empty file");
    assert_eq!(s.schema_version().expect("v"), schema::LATEST_VERSION);
    drop(s);
    let conn = Connection::open(&path).expect("raw");
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type IN ('table', 'trigger') ORDER BY name")
        .expect("prepare");
    let names: Vec<String> = stmt.query_map([], |r| r.get(0)).expect("query").collect::<Result<_, _>>().expect("rows");
    for want in ["profiles", "conversations", "messages", "messages_fts", "outbox", "media", "messages_fts_ai"] {
        assert!(names.iter().any(|n| n == want), "missing {want} in {names:?}");
    }
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).expect("mode");
    assert_eq!(mode, "wal");
}
