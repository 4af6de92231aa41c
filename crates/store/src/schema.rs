//! Versioned schema migrations.
//!
//! The schema version lives in `PRAGMA user_version` (managed by `rusqlite_migration`).
//! **Never edit a migration that has shipped**: append a new one to [`MIGRATIONS`]. The test
//! `tests/migrations.rs` migrates from every prefix of this list and requires a fixture for
//! every version, so a new migration without a fixture fails CI.

use rusqlite_migration::{M, Migrations};

/// Version 1: the initial schema.
const V1: &str = r#"
CREATE TABLE profiles (
    id                TEXT PRIMARY KEY NOT NULL,
    name              TEXT NOT NULL,
    url               TEXT NOT NULL,
    dialect           TEXT NOT NULL CHECK (dialect IN ('adapter', 'v3')),
    -- generated once ('desktop-' + 16 lowercase hex) or given (the CLI's --device-id); never changed (A-1).
    device_id         TEXT NOT NULL UNIQUE CHECK (length(device_id) BETWEEN 1 AND 128 AND device_id NOT GLOB '*[^A-Za-z0-9._:-]*'),
    v3_user_id        TEXT,
    allow_insecure_ws INTEGER NOT NULL DEFAULT 0 CHECK (allow_insecure_ws IN (0, 1)),
    avatar_url        TEXT,
    -- Only a flag: the token itself is in the OS keychain under the profile id.
    has_token         INTEGER NOT NULL DEFAULT 0 CHECK (has_token IN (0, 1)),
    created_at        INTEGER NOT NULL
) STRICT;

CREATE TABLE conversations (
    id           TEXT PRIMARY KEY NOT NULL,
    profile_id   TEXT NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
    title        TEXT NOT NULL,
    session      TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    last_preview TEXT,
    UNIQUE (profile_id, session)
) STRICT;
CREATE INDEX conversations_by_profile ON conversations(profile_id, updated_at DESC);

CREATE TABLE messages (
    seq             INTEGER PRIMARY KEY,  -- rowid: FTS key and paging tie-breaker
    id              TEXT NOT NULL UNIQUE, -- local UUID, ours
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    server_id       TEXT,
    direction       TEXT NOT NULL CHECK (direction IN ('out', 'in')),
    text            TEXT NOT NULL,
    assembly        TEXT NOT NULL CHECK (assembly IN ('streaming', 'final')),
    edit_count      INTEGER NOT NULL DEFAULT 0,
    reply_to        TEXT,
    error_code      TEXT,
    error_text      TEXT,
    delivery        TEXT CHECK (delivery IN ('queued', 'sent', 'delivered', 'failed')),
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    attachments     TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(attachments))
) STRICT;
CREATE UNIQUE INDEX messages_server_id ON messages(conversation_id, server_id)
    WHERE server_id IS NOT NULL;
CREATE INDEX messages_page ON messages(conversation_id, created_at, seq);

-- Full-text index over the text of *final* messages. Its external content is a view, so the
-- index and its content always agree (FTS5 'integrity-check' verifies that): streamed replies
-- are indexed once, when they become final, instead of once per delta.
CREATE VIEW messages_final AS SELECT seq, text FROM messages WHERE assembly = 'final';
CREATE VIRTUAL TABLE messages_fts USING fts5(
    text,
    content = 'messages_final',
    content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages WHEN new.assembly = 'final' BEGIN
    INSERT INTO messages_fts(rowid, text) VALUES (new.seq, new.text);
END;
CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages WHEN old.assembly = 'final' BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.seq, old.text);
END;
-- One trigger (not two) so the delete of the old text always runs before the insert.
CREATE TRIGGER messages_fts_au AFTER UPDATE OF text, assembly ON messages
WHEN old.text IS NOT new.text OR old.assembly IS NOT new.assembly BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text)
        SELECT 'delete', old.seq, old.text WHERE old.assembly = 'final';
    INSERT INTO messages_fts(rowid, text)
        SELECT new.seq, new.text WHERE new.assembly = 'final';
END;

-- Conversation list support: updated_at bumped by new messages (and when a reply becomes
-- final), preview of the newest message. Stream deltas past the preview's 200 characters do
-- not touch the conversation row.
CREATE TRIGGER messages_conv_ai AFTER INSERT ON messages BEGIN
    UPDATE conversations SET
        updated_at = max(updated_at, new.updated_at, new.created_at),
        last_preview = CASE WHEN EXISTS (
                SELECT 1 FROM messages m WHERE m.conversation_id = new.conversation_id
                AND (m.created_at, m.seq) > (new.created_at, new.seq))
            THEN last_preview
            ELSE CASE WHEN new.text = '' AND new.attachments <> '[]' THEN '[attachment]'
                      ELSE substr(new.text, 1, 200) END
        END
    WHERE id = new.conversation_id;
END;
CREATE TRIGGER messages_conv_au AFTER UPDATE OF text, attachments, assembly ON messages
WHEN substr(old.text, 1, 200) IS NOT substr(new.text, 1, 200)
    OR old.attachments IS NOT new.attachments
    OR old.assembly IS NOT new.assembly BEGIN
    UPDATE conversations SET
        updated_at = max(updated_at, new.updated_at),
        last_preview = CASE WHEN EXISTS (
                SELECT 1 FROM messages m WHERE m.conversation_id = new.conversation_id
                AND (m.created_at, m.seq) > (new.created_at, new.seq))
            THEN last_preview
            ELSE CASE WHEN new.text = '' AND new.attachments <> '[]' THEN '[attachment]'
                      ELSE substr(new.text, 1, 200) END
        END
    WHERE id = new.conversation_id;
END;
CREATE TRIGGER messages_conv_ad AFTER DELETE ON messages BEGIN
    UPDATE conversations SET last_preview = (
        SELECT CASE WHEN m.text = '' AND m.attachments <> '[]' THEN '[attachment]'
                    ELSE substr(m.text, 1, 200) END
        FROM messages m WHERE m.conversation_id = old.conversation_id
        ORDER BY m.created_at DESC, m.seq DESC LIMIT 1)
    WHERE id = old.conversation_id;
END;

CREATE TABLE outbox (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT, -- monotonic, never reused: send order
    id              TEXT NOT NULL UNIQUE,              -- the wire id, same forever
    profile_id      TEXT NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    kind            TEXT NOT NULL CHECK (kind IN ('text', 'audio', 'media')),
    payload         TEXT NOT NULL CHECK (json_valid(payload)),
    state           TEXT NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'in_flight', 'confirmed', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX outbox_by_profile ON outbox(profile_id, state, seq);

CREATE TABLE media (
    id         TEXT PRIMARY KEY NOT NULL,
    profile_id TEXT NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
    message_id TEXT,  -- no FK: media may be saved before its message row exists
    path       TEXT NOT NULL,  -- relative to the media folder
    sha256     TEXT NOT NULL CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),
    mime       TEXT NOT NULL,
    size       INTEGER NOT NULL CHECK (size >= 0),
    filename   TEXT,
    origin     TEXT NOT NULL CHECK (origin IN ('sent', 'received')),
    created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX media_by_sha256 ON media(sha256);
CREATE INDEX media_by_message ON media(message_id) WHERE message_id IS NOT NULL;
"#;

/// Version 2: the composer's unsent text per conversation (a draft survives switching conversations, quitting and a
/// crash). Deleted with its conversation.
const V2: &str = r#"
CREATE TABLE drafts (
    conversation_id TEXT PRIMARY KEY NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    text            TEXT NOT NULL CHECK (text <> ''),
    updated_at      INTEGER NOT NULL
) STRICT;
"#;

/// Version 3: what the user has read, per conversation (unread counts survive a restart). `read_upto` is the `seq` of
/// the newest message of the conversation when the user last had it open; the agent's messages after it are unread.
/// A database from before starts with everything read. The partial index lists each conversation's incoming messages
/// by `seq` (its key ends with the rowid), so counting those after `read_upto` is a range, not a scan of the history.
const V3: &str = r#"
ALTER TABLE conversations ADD COLUMN read_upto INTEGER NOT NULL DEFAULT 0;
UPDATE conversations SET read_upto = COALESCE((SELECT MAX(seq) FROM messages WHERE conversation_id = conversations.id), 0);
CREATE INDEX messages_incoming ON messages(conversation_id) WHERE direction = 'in';
"#;

/// Version 4: the agent's cards (approval and question prompts, A-12..A-17) with their outcome, so that the history
/// shows them after a restart and a card still waiting for an answer can be answered then. Keyed by conversation and
/// the agent's prompt id (two agents may use the same ids).
const V4: &str = r#"
CREATE TABLE cards (
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    id              TEXT NOT NULL,
    kind            TEXT NOT NULL,
    text            TEXT NOT NULL,
    options         TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(options)),
    command         TEXT,
    description     TEXT,
    timeout_seconds INTEGER,
    created_at      INTEGER NOT NULL,
    done_option     TEXT,
    done_expired    INTEGER CHECK (done_expired IN (0, 1)),
    PRIMARY KEY (conversation_id, id)
) STRICT;
CREATE INDEX cards_by_time ON cards(conversation_id, created_at);
"#;

/// Version 5: what a real agent needs remembered. `messages.retry_of`: a message sent again under a new id after the
/// agent answered the first one with an error (the adapter drops repeated ids, A-6) names the one it retries.
/// `profiles.home_conversation_id`: the conversation the user made the agent's home channel (`/sethome`, where its
/// scheduled messages go). `profiles.paired_at`: when this device was evidently approved by the agent (an answer to a
/// message sent after the pairing reply, A-8); until then the pairing help stays.
const V5: &str = r#"
ALTER TABLE messages ADD COLUMN retry_of TEXT;
ALTER TABLE profiles ADD COLUMN home_conversation_id TEXT REFERENCES conversations(id) ON DELETE SET NULL;
ALTER TABLE profiles ADD COLUMN paired_at INTEGER;
"#;

/// Version 6: search in the users' own languages. The index is rebuilt with the `hermes` tokenizer
/// ([`crate::tokenizer`]): Chinese and Japanese as bigrams, `ё` as `е`, full-width forms as ASCII. Same table, same
/// external content; the triggers on `messages` name the table and keep working.
const V6: &str = r#"
DROP TABLE messages_fts;
CREATE VIRTUAL TABLE messages_fts USING fts5(
    text,
    content = 'messages_final',
    content_rowid = 'seq',
    tokenize = 'hermes'
);
INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
"#;

/// SQL of every migration, in order; index `i` upgrades version `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[V1, V2, V3, V4, V5, V6];

/// The schema version this build creates and understands.
pub const LATEST_VERSION: i64 = MIGRATIONS.len() as i64;

/// The migrations `0..n` (all of them when `n >= MIGRATIONS.len()`), for tests that need to
/// build a database at an earlier version.
pub fn migrations_up_to(n: usize) -> Migrations<'static> {
    // V6 names the search tokenizer: every connection these run on (rusqlite_migration's own `validate` opens one)
    // must have it.
    crate::tokenizer::install();
    Migrations::new(MIGRATIONS.iter().take(n).map(|sql| M::up(sql)).collect())
}
