//! SQLite store: profiles, conversations, messages, durable outbox, media index, search.
//!
//! One [`Store`] owns one SQLite connection (WAL mode, foreign keys on, versioned migrations).
//! The API is synchronous: `&self` methods. `Store` is `Send` but not `Sync`: use it from one
//! task/thread, or put it behind a `Mutex` (each call is short; heavy work is indexed).
//!
//! Durability: `journal_mode=WAL` + `synchronous=NORMAL` — every committed transaction survives
//! a crash or `kill -9` of the app; see [`Store::open`] for why not `FULL`.
//!
//! Tokens are never stored here: profiles carry only a `has_token` flag, the secret lives in the
//! OS keychain under [`Profile::keychain_account`].

mod cards;
mod conversations;
mod drafts;
mod error;
mod export;
mod media;
mod messages;
mod outbox;
mod paths;
mod profiles;
pub mod schema;
mod search;
pub mod tokenizer;
mod types;
mod unread;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

pub use conversations::adapter_session;
pub use drafts::MAX_DRAFT_BYTES;
pub use error::{Error, Result};
pub use export::{EXPORT_FORMAT, format_utc, render_markdown};
pub use paths::{DB_FILE_NAME, default_data_dir, media_dir, resolve_data_dir};
pub use profiles::new_device_id;
pub use search::fts_query;
pub use types::*;

/// Milliseconds since the Unix epoch (0 if the clock is before 1970).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// A fresh random id (UUID v4, hyphenated lowercase).
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The local store. See the crate docs for threading and durability.
pub struct Store {
    conn: Connection,
    /// The database file; `None` for in-memory stores.
    path: Option<PathBuf>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

impl Store {
    /// Opens (creating if needed) the database file at `path` and migrates it to the latest
    /// schema.
    ///
    /// Pragmas: `journal_mode=WAL`, `synchronous=NORMAL`, `foreign_keys=ON`,
    /// `busy_timeout=5s`, `wal_autocheckpoint=4000` pages, `journal_size_limit=16 MiB`.
    ///
    /// Why `synchronous=NORMAL` and not `FULL`: in WAL mode NORMAL writes every commit to the WAL
    /// file before `COMMIT` returns, so a crash or `kill -9` of the app never loses a committed
    /// transaction (tested in `tests/crash.rs`) and never corrupts the database. What NORMAL gives
    /// up is durability of the *last few* commits across an OS crash or power cut (the WAL is
    /// fsynced only at checkpoints); the database still rolls back to a consistent state. FULL
    /// would fsync on every commit — one fsync per streamed delta of a reply, which costs
    /// milliseconds each on many disks. For a chat client whose server keeps the history, the
    /// trade is right: an outbox entry lost to a power cut is at worst a message the user
    /// sees missing and retypes, and its frame most likely never left the machine either.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref();
        tokenizer::install();
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        Self::init(conn, Some(path.to_path_buf()))
    }

    /// Opens `data_dir/hermes.sqlite3`, creating `data_dir` if needed.
    pub fn open_in(data_dir: impl AsRef<Path>) -> Result<Store> {
        let dir = data_dir.as_ref();
        std::fs::create_dir_all(dir)?;
        Self::open(dir.join(DB_FILE_NAME))
    }

    /// A private in-memory database (tests, previews).
    pub fn open_in_memory() -> Result<Store> {
        tokenizer::install();
        Self::init(Connection::open_in_memory()?, None)
    }

    fn init(mut conn: Connection, path: Option<PathBuf>) -> Result<Store> {
        conn.busy_timeout(Duration::from_secs(5))?;
        // Fails early with Corrupt/NotADatabase on a damaged file (maps to Error::Corrupt).
        let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
        if path.is_some() && !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(%mode, "could not switch the database to WAL mode");
        }
        // wal_autocheckpoint: a checkpoint fsyncs the WAL and the database file. The default
        // (every 1000 pages = 4 MiB) made a streamed reply (one small commit per delta,
        // 3-4 pages each) checkpoint every ~300 deltas; 4000 pages (16 MiB) quarters the fsyncs.
        // journal_size_limit truncates the WAL back to that size after each checkpoint.
        conn.execute_batch(
            "PRAGMA synchronous=NORMAL;
             PRAGMA foreign_keys=ON;
             PRAGMA temp_store=MEMORY;
             PRAGMA wal_autocheckpoint=4000;
             PRAGMA journal_size_limit=16777216;",
        )?;
        conn.set_prepared_statement_cache_capacity(64);
        // Already there through `install` unless this process opened SQLite before it; registering twice is harmless.
        tokenizer::register(&conn)?;
        Self::migrate(&mut conn)?;
        Ok(Store { conn, path })
    }

    fn migrate(conn: &mut Connection) -> Result<()> {
        let found: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if found > schema::LATEST_VERSION {
            return Err(Error::TooNew { found, supported: schema::LATEST_VERSION });
        }
        if found < schema::LATEST_VERSION {
            tracing::info!(from = found, to = schema::LATEST_VERSION, "migrating store");
        }
        schema::migrations_up_to(schema::MIGRATIONS.len()).to_latest(conn)?;
        Ok(())
    }

    /// The database file (`None` for in-memory stores).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The media folder next to the database file (`<data dir>/media`); `None` in memory.
    /// Not created here.
    pub fn media_dir(&self) -> Option<PathBuf> {
        self.path.as_deref().and_then(Path::parent).map(media_dir)
    }

    /// Current schema version (`PRAGMA user_version`).
    pub fn schema_version(&self) -> Result<i64> {
        Ok(self.conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }

    /// Runs `PRAGMA integrity_check` and the FTS index's own integrity check.
    /// Returns the list of problems (empty when healthy).
    pub fn integrity_check(&self) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare("PRAGMA integrity_check")?;
        let mut problems: Vec<String> =
            stmt.query_map([], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<_>>()?;
        problems.retain(|p| p != "ok");
        if let Err(e) =
            self.conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)", [])
        {
            problems.push(format!("fts: {e}"));
        }
        Ok(problems)
    }

    /// Moves the WAL's content into the main file and truncates the WAL
    /// (`PRAGMA wal_checkpoint(TRUNCATE)`). Not needed for durability; useful before backups.
    pub fn checkpoint(&self) -> Result<()> {
        self.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(())
    }

    /// Caps the database size at `pages` pages (`PRAGMA max_page_count`, this connection only):
    /// writes beyond it fail with [`Error::DiskFull`], exactly like a full disk. Returns the
    /// cap in effect (SQLite never lowers it below the current size).
    pub fn set_max_page_count(&self, pages: i64) -> Result<i64> {
        Ok(self.conn.query_row(&format!("PRAGMA max_page_count = {pages}"), [], |r| r.get(0))?)
    }

    /// Runs `f` in one write transaction: all its writes commit together or none do (also if
    /// `f` returns an error or panics). Nested calls (including the store's own multi-statement
    /// methods) become savepoints.
    ///
    /// ```
    /// # use hermes_store::*;
    /// # let store = Store::open_in_memory().unwrap();
    /// # let p = store.profile_create(&NewProfile { name: "a".into(), url: "ws://x".into(),
    /// #     dialect: Dialect::V3, v3_user_id: None, allow_insecure_ws: false, avatar_url: None }).unwrap();
    /// # let conv = store.conversation_create(&p.id, "t").unwrap();
    /// let msg = Message::new(&conv.id, Direction::Up, "hi", now_ms());
    /// store.atomically(|s| {
    ///     s.message_upsert(&msg)?;
    ///     s.outbox_insert(&NewOutboxEntry {
    ///         id: msg.id.clone(), profile_id: p.id.clone(), conversation_id: conv.id.clone(),
    ///         kind: OutboxKind::Text, payload: serde_json::json!({"text": "hi"}),
    ///     })?;
    ///     Ok(())
    /// }).unwrap();
    /// ```
    pub fn atomically<T>(&self, f: impl FnOnce(&Store) -> Result<T>) -> Result<T> {
        self.write_tx(|_| f(self))
    }

    /// Transaction helper: `BEGIN IMMEDIATE` at the outermost level (so the write lock is taken
    /// up front and a busy database fails at the start, not halfway), a savepoint when nested.
    pub(crate) fn write_tx<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let outer = self.conn.is_autocommit();
        if outer {
            self.conn.execute_batch("BEGIN IMMEDIATE")?;
        } else {
            self.conn.execute_batch("SAVEPOINT hermes_tx")?;
        }
        let mut guard = TxGuard { conn: &self.conn, outer, done: false };
        let value = f(&self.conn)?;
        guard.commit()?;
        Ok(value)
    }
}

/// Rolls back on drop unless committed (errors and panics inside a transaction).
struct TxGuard<'c> {
    conn: &'c Connection,
    outer: bool,
    done: bool,
}

impl TxGuard<'_> {
    fn commit(&mut self) -> Result<()> {
        let sql = if self.outer { "COMMIT" } else { "RELEASE hermes_tx" };
        self.conn.execute_batch(sql)?;
        self.done = true;
        Ok(())
    }
}

impl Drop for TxGuard<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let sql = if self.outer { "ROLLBACK" } else { "ROLLBACK TO hermes_tx; RELEASE hermes_tx" };
        // After some errors (e.g. SQLITE_FULL during COMMIT) SQLite has already rolled back;
        // the ROLLBACK then fails harmlessly.
        if self.outer && self.conn.is_autocommit() {
            return;
        }
        if let Err(e) = self.conn.execute_batch(sql) {
            tracing::warn!(error = %e, "rollback failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send<T: Send>() {}

    #[test]
    fn store_is_send() {
        assert_send::<Store>();
    }

    #[test]
    fn in_memory_store_is_at_latest_version() {
        let s = Store::open_in_memory().expect("open");
        assert_eq!(s.schema_version().expect("version"), schema::LATEST_VERSION);
        assert!(s.integrity_check().expect("check").is_empty());
    }

    #[test]
    fn durability_pragmas_are_in_effect() {
        let dir = tempfile::tempdir().expect("tmp");
        let s = Store::open_in(dir.path()).expect("open");
        let get = |p: &str| -> String {
            s.conn
                .query_row(&format!("PRAGMA {p}"), [], |r| r.get::<_, rusqlite::types::Value>(0))
                .map(|v| format!("{v:?}"))
                .expect("pragma")
        };
        assert_eq!(get("journal_mode"), "Text(\"wal\")");
        assert_eq!(get("synchronous"), "Integer(1)", "NORMAL");
        assert_eq!(get("foreign_keys"), "Integer(1)");
        assert_eq!(get("wal_autocheckpoint"), "Integer(4000)");
        assert_eq!(get("busy_timeout"), "Integer(5000)");
    }

    #[test]
    fn failed_transaction_rolls_back_nested_writes() {
        let s = Store::open_in_memory().expect("open");
        let r: Result<()> = s.atomically(|s| {
            s.profile_create(&NewProfile {
                name: "x".into(),
                url: "ws://h".into(),
                dialect: Dialect::V3,
                v3_user_id: None,
                allow_insecure_ws: false,
                avatar_url: None,
            })?;
            Err(Error::InvalidInput("boom".into()))
        });
        assert!(matches!(r, Err(Error::InvalidInput(_))));
        assert!(s.profiles().expect("list").is_empty());
        // The connection is usable afterwards (no dangling transaction).
        assert!(s.conn.is_autocommit());
    }
}
