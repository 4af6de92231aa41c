//! The profile token never reaches the database files.
//!
//! `NewProfile` / `Profile` have no token field, so the only way to leak it would be through
//! some other column; this test does everything the app does around a token (fake keychain
//! keyed by the profile's keychain account, messages, outbox, media, search) and then scans the
//! raw bytes of the database and its WAL. A control "canary" string written as a message proves
//! the scan does see data written through the store.

use std::collections::HashMap;
use std::path::Path;

use hermes_store::*;
use rand::Rng;

fn random_hex64() -> String {
    let bytes: [u8; 32] = rand::rng().random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn occurrences(haystack: &[u8], needle: &[u8]) -> usize {
    haystack.windows(needle.len()).filter(|w| *w == needle).count()
}

fn scan(dir: &Path, needle: &str) -> usize {
    let mut hits = 0;
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
        if name.starts_with(DB_FILE_NAME) {
            let bytes = std::fs::read(&path).expect("read db file");
            hits += occurrences(&bytes, needle.as_bytes());
            hits += occurrences(&bytes, needle.to_uppercase().as_bytes());
        }
    }
    hits
}

#[test]
fn token_never_reaches_the_database_files() {
    let tmp = tempfile::tempdir().expect("tmp");
    let token = random_hex64();
    let canary = random_hex64();
    let mut keychain: HashMap<String, String> = HashMap::new();

    let s = Store::open_in(tmp.path()).expect("open");
    let p = s
        .profile_create(&NewProfile {
            name: "Home agent".into(),
            url: "wss://hermes.local/ws".into(),
            dialect: Dialect::V3,
            v3_user_id: Some("me".into()),
            allow_insecure_ws: false,
            avatar_url: None,
        })
        .expect("profile");
    keychain.insert(p.keychain_account().to_owned(), token.clone());
    s.profile_set_has_token(&p.id, true).expect("flag");

    let c = s.conversation_create(&p.id, "Chat").expect("conv");
    for i in 0..200 {
        let m = Message::new(&c.id, Direction::Up, &format!("message number {i}"), i);
        s.atomically(|s| {
            s.message_upsert(&m)?;
            s.outbox_insert(&NewOutboxEntry {
                id: m.id.clone(),
                profile_id: p.id.clone(),
                conversation_id: c.id.clone(),
                kind: OutboxKind::Text,
                payload: serde_json::json!({ "text": m.text }),
            })?;
            Ok(())
        })
        .expect("write");
    }
    s.message_upsert(&Message::new(&c.id, Direction::Down, &format!("canary {canary}"), 999)).expect("canary");
    s.media_insert(&MediaEntry {
        id: "img".into(),
        profile_id: p.id.clone(),
        message_id: None,
        path: "a.png".into(),
        sha256: "cd".repeat(32),
        mime: "image/png".into(),
        size: 3,
        filename: None,
        origin: MediaOrigin::Sent,
        created_at: 1,
    })
    .expect("media");
    assert_eq!(s.search("canary", &SearchOptions::default()).expect("search").len(), 1);

    // Before the checkpoint: data is in the WAL.
    assert_eq!(scan(tmp.path(), &token), 0, "token found in WAL");
    assert!(scan(tmp.path(), &canary) > 0, "scan must see freshly written data");

    s.checkpoint().expect("checkpoint");
    drop(s);
    assert!(tmp.path().join(DB_FILE_NAME).metadata().expect("meta").len() > 0);
    assert!(scan(tmp.path(), &canary) > 0, "scan must see checkpointed data");
    assert_eq!(scan(tmp.path(), &token), 0, "token found in database file");
    // The app can still find the token by the reference the store gives it.
    assert_eq!(keychain.get(p.keychain_account()), Some(&token));
}
