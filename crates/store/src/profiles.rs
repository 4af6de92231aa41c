//! Profiles: one per agent the user talks to.

use rand::Rng;
use rusqlite::{OptionalExtension, Row, params};

use crate::types::DialectText;
use crate::{Dialect, Error, NewProfile, Profile, ProfileUpdate, Result, Store, new_id, now_ms};

const COLS: &str = "id, name, url, dialect, device_id, v3_user_id, allow_insecure_ws, avatar_url, \
                    has_token, created_at";
const READ_COLS: &str = "id, name, url, dialect, device_id, v3_user_id, allow_insecure_ws, avatar_url, \
                         has_token, created_at, home_conversation_id, paired_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<Profile> {
    Ok(Profile {
        id: r.get(0)?,
        name: r.get(1)?,
        url: r.get(2)?,
        dialect: r.get::<_, DialectText>(3)?.0,
        device_id: r.get(4)?,
        v3_user_id: r.get(5)?,
        allow_insecure_ws: r.get(6)?,
        avatar_url: r.get(7)?,
        has_token: r.get(8)?,
        created_at: r.get(9)?,
        home_conversation_id: r.get(10)?,
        paired_at: r.get(11)?,
    })
}

/// A fresh device id: `desktop-` + 16 lowercase hex chars.
pub fn new_device_id() -> String {
    format!("desktop-{:016x}", rand::rng().random::<u64>())
}

impl Store {
    /// Creates a profile with a fresh id and a fresh, permanent device id.
    /// (No token here: store it in the keychain under [`Profile::keychain_account`], then call
    /// [`Store::profile_set_has_token`].)
    pub fn profile_create(&self, new: &NewProfile) -> Result<Profile> {
        self.profile_create_with_device_id(new, &new_device_id())
    }

    /// Creates a profile for a device id chosen elsewhere (the CLI's `--device-id`, an import). The id is kept
    /// forever like any other. `InvalidInput` for an empty id.
    pub fn profile_create_with_device_id(&self, new: &NewProfile, device_id: &str) -> Result<Profile> {
        let ok = (1..=128).contains(&device_id.len())
            && device_id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'));
        if !ok {
            return Err(crate::Error::InvalidInput(format!(
                "a device id is 1 to 128 letters, digits or . _ : - (got {device_id:?})"
            )));
        }
        let profile = Profile {
            id: new_id(),
            name: new.name.clone(),
            url: new.url.clone(),
            dialect: new.dialect,
            device_id: device_id.to_string(),
            v3_user_id: new.v3_user_id.clone(),
            allow_insecure_ws: new.allow_insecure_ws,
            avatar_url: new.avatar_url.clone(),
            has_token: false,
            created_at: now_ms(),
            home_conversation_id: None,
            paired_at: None,
        };
        self.conn
            .prepare_cached(&format!("INSERT INTO profiles ({COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"))?
            .execute(params![
                profile.id,
                profile.name,
                profile.url,
                DialectText(profile.dialect),
                profile.device_id,
                profile.v3_user_id,
                profile.allow_insecure_ws,
                profile.avatar_url,
                profile.has_token,
                profile.created_at,
            ])?;
        Ok(profile)
    }

    /// The profile, or `None`.
    pub fn profile_get(&self, id: &str) -> Result<Option<Profile>> {
        Ok(self
            .conn
            .prepare_cached(&format!("SELECT {READ_COLS} FROM profiles WHERE id = ?1"))?
            .query_row([id], from_row)
            .optional()?)
    }

    pub(crate) fn profile_require(&self, id: &str) -> Result<Profile> {
        self.profile_get(id)?.ok_or_else(|| Error::NotFound(format!("profile {id}")))
    }

    /// All profiles, oldest first.
    pub fn profiles(&self) -> Result<Vec<Profile>> {
        let mut stmt =
            self.conn.prepare_cached(&format!("SELECT {READ_COLS} FROM profiles ORDER BY created_at, id"))?;
        let rows = stmt.query_map([], from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Replaces the mutable fields; dialect and device id never change. Returns the new row.
    pub fn profile_update(&self, id: &str, update: &ProfileUpdate) -> Result<Profile> {
        let n = self
            .conn
            .prepare_cached(
                "UPDATE profiles SET name = ?2, url = ?3, v3_user_id = ?4, allow_insecure_ws = ?5,
                 avatar_url = ?6 WHERE id = ?1",
            )?
            .execute(params![
                id,
                update.name,
                update.url,
                update.v3_user_id,
                update.allow_insecure_ws,
                update.avatar_url
            ])?;
        if n == 0 {
            return Err(Error::NotFound(format!("profile {id}")));
        }
        self.profile_require(id)
    }

    /// Records whether the keychain holds a token for this profile (the flag only).
    pub fn profile_set_has_token(&self, id: &str, has_token: bool) -> Result<()> {
        let n = self
            .conn
            .prepare_cached("UPDATE profiles SET has_token = ?2 WHERE id = ?1")?
            .execute(params![id, has_token])?;
        if n == 0 {
            return Err(Error::NotFound(format!("profile {id}")));
        }
        Ok(())
    }

    /// Makes `conversation_id` the agent's home channel (where its scheduled messages go), or clears it with `None`.
    /// `InvalidInput` if the conversation is not this profile's; `NotFound` if the profile does not exist.
    pub fn profile_set_home(&self, id: &str, conversation_id: Option<&str>) -> Result<Profile> {
        if let Some(c) = conversation_id {
            let owner: Option<String> = self
                .conn
                .prepare_cached("SELECT profile_id FROM conversations WHERE id = ?1")?
                .query_row([c], |r| r.get(0))
                .optional()?;
            if owner.as_deref() != Some(id) {
                return Err(Error::InvalidInput(format!("conversation {c} is not one of profile {id}")));
            }
        }
        let n = self
            .conn
            .prepare_cached("UPDATE profiles SET home_conversation_id = ?2 WHERE id = ?1")?
            .execute(params![id, conversation_id])?;
        if n == 0 {
            return Err(Error::NotFound(format!("profile {id}")));
        }
        self.profile_require(id)
    }

    /// Records that the agent evidently approved this device, once: the first time wins. Returns the profile.
    pub fn profile_mark_paired(&self, id: &str) -> Result<Profile> {
        let n = self
            .conn
            .prepare_cached("UPDATE profiles SET paired_at = coalesce(paired_at, ?2) WHERE id = ?1")?
            .execute(params![id, now_ms()])?;
        if n == 0 {
            return Err(Error::NotFound(format!("profile {id}")));
        }
        self.profile_require(id)
    }

    /// Forgets the approval (the agent refused the device again: `auth_failed` / close 1008): the pairing help
    /// shows until the next evident approval.
    pub fn profile_clear_paired(&self, id: &str) -> Result<()> {
        let n = self.conn.prepare_cached("UPDATE profiles SET paired_at = NULL WHERE id = ?1")?.execute([id])?;
        if n == 0 {
            return Err(Error::NotFound(format!("profile {id}")));
        }
        Ok(())
    }

    /// Deletes the profile and everything under it (conversations, messages, outbox, media
    /// index rows). Returns the relative paths of its media files so the caller can delete them
    /// from disk (and its keychain entry). `NotFound` if it does not exist.
    pub fn profile_delete(&self, id: &str) -> Result<Vec<String>> {
        self.write_tx(|conn| {
            let paths = conn
                .prepare_cached("SELECT path FROM media WHERE profile_id = ?1 ORDER BY path")?
                .query_map([id], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let n = conn.prepare_cached("DELETE FROM profiles WHERE id = ?1")?.execute([id])?;
            if n == 0 {
                return Err(Error::NotFound(format!("profile {id}")));
            }
            Ok(paths)
        })
    }
}

/// Used by conversations: the dialect check.
pub(crate) fn require_dialect(profile: &Profile, expected: Dialect) -> Result<()> {
    if profile.dialect == expected {
        Ok(())
    } else {
        Err(Error::WrongDialect {
            profile_id: profile.id.clone(),
            expected: expected.as_str(),
            actual: profile.dialect.as_str(),
        })
    }
}
