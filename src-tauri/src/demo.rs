//! First run without any profile: the built-in demo agent, in process on the loopback, so the app is alive at once.
//! Its profile is remembered (`demo-profile` in the data folder); its random token is session-only (never stored).

use rand::RngCore as _;

use crate::state::{AppState, Demo};

const MARKER: &str = "demo-profile";

pub fn start_if_needed(state: &AppState) {
    let marker = state.data_dir.join(MARKER);
    let marked = std::fs::read_to_string(&marker).ok().map(|s| s.trim().to_string());
    let profiles = match state.with_store(|s| s.profiles()) {
        Ok(p) => p,
        Err(e) => {
            tracing::error!("cannot read profiles: {e}");
            return;
        }
    };
    let demo_profile = marked.as_ref().and_then(|id| profiles.iter().find(|p| &p.id == id)).cloned();
    if demo_profile.is_none() && !profiles.is_empty() {
        return; // the user has real profiles and removed the demo
    }
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    crate::security::register_secret(&token);
    let cfg = hermes_devserver::Config {
        token: token.clone(),
        media_dir: Some(state.data_dir.join("demo-agent-media")),
        ..hermes_devserver::Config::default()
    };
    let server = match tauri::async_runtime::block_on(hermes_devserver::start(cfg)) {
        Ok(s) => s,
        Err(e) => {
            tracing::error!("the demo agent did not start: {e}");
            return;
        }
    };
    let url = server.adapter_url();
    let res = state.with_store(|s| match &demo_profile {
        Some(p) => {
            let mut upd = hermes_store::ProfileUpdate::from(p);
            upd.url = url.clone();
            s.profile_update(&p.id, &upd)
        }
        None => s.profile_create(&hermes_store::NewProfile {
            name: "Demo agent".into(),
            url: url.clone(),
            dialect: hermes_store::Dialect::Adapter,
            v3_user_id: None,
            allow_insecure_ws: false,
            avatar_url: None,
        }),
    });
    match res {
        Ok(p) => {
            if let Err(e) = std::fs::write(&marker, &p.id) {
                tracing::warn!("cannot remember the demo profile: {e}");
            }
            if let Ok(mut m) = state.session_tokens.lock() {
                m.insert(p.id.clone(), hermes_client::Secret::new(token));
            }
            tracing::info!(profile = %p.id, url = %url, "demo agent started");
            if let Ok(mut d) = state.demo.lock() {
                *d = Some(Demo { profile_id: p.id, server });
            }
        }
        Err(e) => tracing::error!("cannot create the demo profile: {e}"),
    }
}
