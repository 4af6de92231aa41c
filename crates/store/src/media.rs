//! Media index: files the engine saved under the media folder.

use std::path::{Component, Path};

use rusqlite::{OptionalExtension, Row, params};

use crate::{Error, MediaEntry, Result, Store};

const COLS: &str = "id, profile_id, message_id, path, sha256, mime, size, filename, origin, created_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<MediaEntry> {
    Ok(MediaEntry {
        id: r.get(0)?,
        profile_id: r.get(1)?,
        message_id: r.get(2)?,
        path: r.get(3)?,
        sha256: r.get(4)?,
        mime: r.get(5)?,
        size: u64::try_from(r.get::<_, i64>(6)?).unwrap_or(0),
        filename: r.get(7)?,
        origin: r.get(8)?,
        created_at: r.get(9)?,
    })
}

/// A media path must stay inside the media folder: relative, no `..`, no root or prefix.
fn validate_path(path: &str) -> Result<()> {
    let ok = !path.is_empty()
        && !path.contains('\\')
        && Path::new(path).components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!("media path must be relative to the media folder without '..': {path:?}")))
    }
}

fn validate_sha256(sha: &str) -> Result<()> {
    if sha.len() == 64 && sha.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!("sha256 must be 64 lowercase hex chars: {sha:?}")))
    }
}

impl Store {
    /// Records a saved file. `InvalidInput` for an absolute / escaping path or a malformed
    /// hash; `Constraint` for a duplicate id or an unknown profile.
    pub fn media_insert(&self, m: &MediaEntry) -> Result<()> {
        validate_path(&m.path)?;
        validate_sha256(&m.sha256)?;
        let size =
            i64::try_from(m.size).map_err(|_| Error::InvalidInput(format!("media size too large: {}", m.size)))?;
        self.conn
            .prepare_cached(&format!("INSERT INTO media ({COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"))?
            .execute(params![
                m.id,
                m.profile_id,
                m.message_id,
                m.path,
                m.sha256,
                m.mime,
                size,
                m.filename,
                m.origin,
                m.created_at
            ])?;
        Ok(())
    }

    /// The entry with this id, or `None`.
    pub fn media_get(&self, id: &str) -> Result<Option<MediaEntry>> {
        Ok(self
            .conn
            .prepare_cached(&format!("SELECT {COLS} FROM media WHERE id = ?1"))?
            .query_row([id], from_row)
            .optional()?)
    }

    /// Entries whose content has this SHA-256 (lowercase hex; case-insensitive input),
    /// optionally within one profile, oldest first. Used to deduplicate files.
    pub fn media_by_sha256(&self, sha256: &str, profile_id: Option<&str>) -> Result<Vec<MediaEntry>> {
        let sha = sha256.to_ascii_lowercase();
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLS} FROM media WHERE sha256 = ?1 AND (?2 IS NULL OR profile_id = ?2)
             ORDER BY created_at, id"
        ))?;
        let rows = stmt.query_map(params![sha, profile_id], from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Entries attached to a message, oldest first.
    pub fn media_for_message(&self, message_id: &str) -> Result<Vec<MediaEntry>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT {COLS} FROM media WHERE message_id = ?1 ORDER BY created_at, id"))?;
        let rows = stmt.query_map([message_id], from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Links (or unlinks) an entry to a message. `NotFound` if absent.
    pub fn media_set_message(&self, id: &str, message_id: Option<&str>) -> Result<()> {
        let n = self
            .conn
            .prepare_cached("UPDATE media SET message_id = ?2 WHERE id = ?1")?
            .execute(params![id, message_id])?;
        if n == 0 {
            return Err(Error::NotFound(format!("media {id}")));
        }
        Ok(())
    }

    /// Removes an entry (not the file). Returns whether it existed.
    pub fn media_delete(&self, id: &str) -> Result<bool> {
        Ok(self.conn.prepare_cached("DELETE FROM media WHERE id = ?1")?.execute([id])? > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_validation() {
        for ok in ["a.png", "2024/01/a.png", "./x/y.ogg"] {
            assert!(validate_path(ok).is_ok(), "{ok}");
        }
        for bad in ["", "/etc/passwd", "../x", "a/../../x", "a\\..\\x", "C:\\x"] {
            assert!(validate_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sha_validation() {
        assert!(validate_sha256(&"a".repeat(64)).is_ok());
        assert!(validate_sha256(&"A".repeat(64)).is_err());
        assert!(validate_sha256(&"a".repeat(63)).is_err());
        assert!(validate_sha256(&"g".repeat(64)).is_err());
    }
}
