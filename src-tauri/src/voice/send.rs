//! `voice_stop`'s own send: the finished clips to the profile's engine, without a round trip through the page.

use serde::Deserialize;
use specta::Type;

use super::VoiceClip;

/// Where `voice_stop` sends a push-to-talk clip at once (key-up → `audio` frame without a round trip through the UI).
#[derive(Debug, Clone, Deserialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct VoiceSendTo {
    pub profile_id: String,
    /// v3 conversation (as in `send_command`).
    pub session: Option<String>,
    /// Message ids chosen by the UI for the clips, in order (a long recording is split, A-24); clips beyond them get
    /// ids from the engine.
    pub ids: Vec<String>,
}

/// Hand each clip to the profile's engine as an `audio` command, in order; a refusal is kept on its clip (the rest are
/// still sent: each is a message of its own).
pub(super) async fn send_clips(app: &crate::state::AppState, to: VoiceSendTo, clips: &mut [VoiceClip]) {
    let mut ids = to.ids.into_iter();
    for clip in clips.iter_mut() {
        let id = ids.next();
        let cmd = crate::ipc::EngineCommand::Audio {
            path: clip.path.clone(),
            text: None,
            id: id.clone(),
            session: to.session.clone(),
            retry_of: None,
        };
        let sent = match crate::grants::resolve_command(crate::grants::global(), cmd) {
            Ok(cmd) => app.engine_command(&to.profile_id, cmd).await,
            Err(e) => Err(e),
        };
        match sent {
            Ok(sent) => clip.id = sent.or(id),
            Err(e) => {
                clip.id = id;
                clip.error = Some(e);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::voice::write_clips;

    #[test]
    fn a24_clips_voice_stop_could_not_send_keep_their_ids_and_say_why() {
        let dir = tempfile::tempdir().unwrap();
        let st = crate::state::AppState::new(
            hermes_store::Store::open_in_memory().unwrap(),
            dir.path().into(),
            dir.path().join("logs"),
            crate::state::Keychain::known(crate::ipc::KeychainInfo { available: false, detail: None }),
        );
        // one second of audio split into two WAVs, for a profile with no engine (not connected)
        let mut clips = write_clips(&vec![0i16; 16_000], dir.path(), 20_000).unwrap();
        assert_eq!(clips.len(), 2);
        let to = VoiceSendTo { profile_id: "p-offline".into(), session: None, ids: vec!["v-1".into()] };
        tauri::async_runtime::block_on(send_clips(&st, to, &mut clips));
        // the first under the UI's id; the second had none to take and none was made (nothing went out)
        assert_eq!(clips.iter().map(|c| c.id.as_deref()).collect::<Vec<_>>(), vec![Some("v-1"), None]);
        for c in &clips {
            let g = crate::grants::global().resolve(&c.path).unwrap();
            assert_eq!(g.purpose, crate::grants::Purpose::Recorded, "the page names a clip by its token");
            assert_eq!(c.error.as_ref().map(|e| e.code.as_str()), Some("not_connected"), "{c:?}");
        }
    }
}
