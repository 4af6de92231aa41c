//! Opening a profile's connection: the profile's conversation, the engine's configuration, the store as its
//! persistence, and the engine started.

use hermes_client::{EngineConfig, Events, Handle, Secret, StorePersist};
use hermes_store::{Conversation, Profile};

use crate::{App, Result};

/// The title of a conversation created because a v3 profile had none to connect in.
pub const NEW_CONVERSATION_TITLE: &str = "New conversation";

/// What a front end adds to what the profile says.
#[derive(Debug, Clone, Default)]
pub struct ConnectOptions {
    /// v3: the conversation (session UUID) to talk in by default, created when the profile has none with it.
    /// `None`: the profile's most recent conversation (one is created when it has none). The adapter has one only.
    pub session: Option<String>,
    /// The title of a conversation created for the connection (default [`NEW_CONVERSATION_TITLE`]).
    pub new_title: Option<String>,
    /// v3: our user id instead of the profile's (default: the profile's, else the JWT's `sub`).
    pub user_id: Option<String>,
    /// Allow `ws://` to a public address even when the profile does not.
    pub allow_insecure_ws: bool,
    /// The largest file to download from the agent (default: the engine's).
    pub max_download_bytes: Option<u64>,
    /// Our per-file limit for adapter media; the agent's `max_media_bytes` is clamped to it (default: the engine's,
    /// 64 MiB).
    pub max_media_bytes: Option<u64>,
    /// The media folder's quota (default: the engine's, 2 GiB).
    pub media_quota_bytes: Option<u64>,
}

/// A connection ready to start: the conversation it talks in by default, and the engine's configuration.
#[derive(Debug)]
pub struct Prepared {
    pub conversation: Conversation,
    pub config: EngineConfig,
}

/// A running engine for a profile: its handle, its events, and the conversation it talks in by default.
pub struct Connection {
    pub conversation: Conversation,
    pub handle: Handle,
    pub events: Events,
}

impl App {
    /// The conversation a connection of `profile` talks in by default (see [`ConnectOptions::session`]).
    pub fn conversation_to_open(&self, profile: &Profile, opts: &ConnectOptions) -> Result<Conversation> {
        let title = opts.new_title.as_deref().unwrap_or(NEW_CONVERSATION_TITLE);
        self.with_store(|s| match profile.dialect {
            hermes_store::Dialect::Adapter => s.conversation_for_adapter(&profile.id),
            hermes_store::Dialect::V3 => {
                let convs = s.conversations(&profile.id)?;
                match &opts.session {
                    Some(session) => match convs.into_iter().find(|c| &c.session == session) {
                        Some(c) => Ok(c),
                        None => s.conversation_create_with_session(&profile.id, title, session),
                    },
                    None => match convs.into_iter().next() {
                        Some(c) => Ok(c),
                        None => s.conversation_create(&profile.id, title),
                    },
                }
            }
        })
    }

    /// The profile's conversation and the engine's configuration, nothing started.
    pub fn prepare(&self, profile: &Profile, token: Secret, opts: &ConnectOptions) -> Result<Prepared> {
        let conversation = self.conversation_to_open(profile, opts)?;
        let mut config = EngineConfig::new(&profile.url, profile.dialect, token, &profile.device_id, &self.data_dir);
        config.user_id = opts.user_id.clone().or_else(|| profile.v3_user_id.clone());
        config.allow_insecure_ws = opts.allow_insecure_ws || profile.allow_insecure_ws;
        config.media_dir = self.media_dir.clone();
        config.default_session = conversation.session.clone();
        if let Some(max) = opts.max_download_bytes {
            config.max_download_bytes = max;
        }
        if let Some(max) = opts.max_media_bytes {
            config.max_media_bytes = max;
        }
        if let Some(quota) = opts.media_quota_bytes {
            config.media_quota_bytes = quota;
        }
        Ok(Prepared { conversation, config })
    }

    /// Start the engine of a prepared connection; what it sends and receives is kept in this app's store.
    pub fn start(&self, profile: &Profile, prepared: Prepared) -> Result<Connection> {
        let Prepared { conversation, config } = prepared;
        let persist = StorePersist::new(self.store.clone(), &profile.id, &conversation.id, &config.media_dir);
        let (handle, events) = hermes_client::spawn(config, Box::new(persist))?;
        tracing::info!(profile = %profile.id, url = %hermes_client::policy::redact_url(&profile.url), "connecting");
        Ok(Connection { conversation, handle, events })
    }

    /// [`App::prepare`] then [`App::start`].
    pub fn connect(&self, profile: &Profile, token: Secret, opts: &ConnectOptions) -> Result<Connection> {
        let prepared = self.prepare(profile, token, opts)?;
        self.start(profile, prepared)
    }
}
