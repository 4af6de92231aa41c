//! Profiles: what the user typed, checked and trimmed; pairing and home channel; the CLI's profile per device.

use hermes_client::policy;
use hermes_store::{NewProfile, Profile, ProfileUpdate, Store};

use crate::{App, Error, ProfileInput, Result};

/// A profile the engine could connect to: a name, and a URL it accepts (A-30: `ws://` to a public address only when
/// the user allowed it).
pub fn check_input(input: &ProfileInput) -> Result<()> {
    if input.name.trim().is_empty() {
        return Err(Error::NameMissing);
    }
    policy::check_url(input.url.trim(), input.allow_insecure_ws, input.dialect == hermes_store::Dialect::Adapter)?;
    Ok(())
}

/// A trimmed optional field; an empty one is none.
fn clean(s: Option<&str>) -> Option<String> {
    s.map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

impl App {
    pub fn profiles(&self) -> Result<Vec<Profile>> {
        self.with_store(|s| s.profiles())
    }

    /// The profile `id`, or [`Error::NotFound`].
    pub fn profile(&self, id: &str) -> Result<Profile> {
        self.with_store(|s| s.profile_get(id))?.ok_or(Error::NotFound("the profile"))
    }

    pub fn create_profile(&self, input: &ProfileInput) -> Result<Profile> {
        check_input(input)?;
        let new = NewProfile {
            name: input.name.trim().to_string(),
            url: input.url.trim().to_string(),
            dialect: input.dialect,
            v3_user_id: clean(input.user_id.as_deref()),
            allow_insecure_ws: input.allow_insecure_ws,
            avatar_url: clean(input.avatar_url_override.as_deref()),
        };
        let p = self.with_store(|s| s.profile_create(&new))?;
        tracing::info!(profile = %p.id, url = %policy::redact_url(&p.url), "profile created");
        Ok(p)
    }

    /// A profile's editable fields (its dialect and device id never change).
    pub fn update_profile(&self, id: &str, input: &ProfileInput) -> Result<Profile> {
        check_input(input)?;
        let upd = ProfileUpdate {
            name: input.name.trim().to_string(),
            url: input.url.trim().to_string(),
            v3_user_id: clean(input.user_id.as_deref()),
            allow_insecure_ws: input.allow_insecure_ws,
            avatar_url: clean(input.avatar_url_override.as_deref()),
        };
        self.with_store(|s| s.profile_update(id, &upd))
    }

    /// The agent evidently approved this device (A-8: it answered a message sent after its first reply; the first
    /// time is kept), or refused it again (`auth_failed` / close 1008: `paired` false).
    pub fn set_paired(&self, profile_id: &str, paired: bool) -> Result<Profile> {
        self.with_store(|s| set_paired(s, profile_id, paired))
    }

    /// Makes a conversation the agent's home channel (the user sent `/sethome` there: its scheduled messages arrive
    /// there), or clears it with `None`. Refused when the conversation is not the profile's.
    pub fn set_home(&self, profile_id: &str, conversation_id: Option<&str>) -> Result<Profile> {
        self.with_store(|s| s.profile_set_home(profile_id, conversation_id))
    }

    /// Whether the OS keychain holds a token for the profile (a flag; the secret is never in the store).
    pub fn set_has_token(&self, profile_id: &str, has_token: bool) -> Result<()> {
        self.with_store(|s| s.profile_set_has_token(profile_id, has_token))
    }

    /// The profile, its conversations, messages, cards and outbox; its received files' index rows.
    pub fn delete_profile(&self, id: &str) -> Result<()> {
        self.with_store(|s| s.profile_delete(id))?;
        // its avatar picture goes with it
        if let Err(e) = crate::picture::remove(&self.data_dir, id) {
            tracing::warn!(profile = %id, "could not remove the avatar picture: {e}");
        }
        Ok(())
    }

    /// The profile of this URL, dialect and device id (created from `new` on first use): a front end that names
    /// its agent on each start (`hermes-chat --url … --device-id …`) finds its history again.
    pub fn device_profile(&self, new: &NewProfile, device_id: &str) -> Result<Profile> {
        self.with_store(|s| {
            let existing = s
                .profiles()?
                .into_iter()
                .find(|p| p.url == new.url && p.device_id == device_id && p.dialect == new.dialect);
            match existing {
                Some(p) => Ok(p),
                None => s.profile_create_with_device_id(new, device_id),
            }
        })
    }
}

fn set_paired(s: &Store, profile_id: &str, paired: bool) -> hermes_store::Result<Profile> {
    if paired {
        s.profile_mark_paired(profile_id)
    } else {
        s.profile_clear_paired(profile_id)?;
        s.profile_get(profile_id)?.ok_or_else(|| hermes_store::Error::NotFound(format!("profile {profile_id}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_paired_records_once_and_forgets() {
        let dir = tempfile::tempdir().unwrap();
        let app = App::open(dir.path()).unwrap();
        let id =
            app.with_store(|s| s.profile_create(&NewProfile::adapter("Hermes", "ws://127.0.0.1:8787/ws"))).unwrap().id;
        assert!(!crate::Profile::from_store(app.profile(&id).unwrap(), false).paired);
        let first = app.set_paired(&id, true).unwrap();
        assert!(first.paired_at.is_some() && crate::Profile::from_store(first.clone(), false).paired);
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert_eq!(app.set_paired(&id, true).unwrap().paired_at, first.paired_at, "the first time is kept");
        let forgotten = app.set_paired(&id, false).unwrap();
        assert_eq!(forgotten.paired_at, None);
        assert!(!crate::Profile::from_store(forgotten, false).paired);
        let e = app.set_paired("nobody", false).unwrap_err();
        assert!(matches!(e, Error::Store(hermes_store::Error::NotFound(_))), "{e:?}");
    }

    #[test]
    fn a_session_token_counts_as_a_token_kept_for_this_run_only() {
        let dir = tempfile::tempdir().unwrap();
        let app = App::open(dir.path()).unwrap();
        let p = app.with_store(|s| s.profile_create(&NewProfile::adapter("Hermes", "ws://127.0.0.1:8787/ws"))).unwrap();
        let v = crate::Profile::from_store(p.clone(), true);
        assert!(v.has_token && v.token_session_only);
        app.set_has_token(&p.id, true).unwrap();
        let v = crate::Profile::from_store(app.profile(&p.id).unwrap(), true);
        assert!(v.has_token && !v.token_session_only, "the keychain's token is not a session one");
    }
}
