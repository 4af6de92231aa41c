//! Commands from the front end: validated, copied into the outbox folder, persisted, then handed to the session
//! the outbox entry exists before anything is sent).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use hermes_protocol::media::{UpMediaMeta, safe_filename};
use hermes_protocol::session::Outgoing;
use hermes_protocol::{Command, Dialect, Event, Refusal};
use tracing::warn;

use super::socket::io_text;
use super::{Engine, Reply, Ws, now, unix_now};
use crate::files::{kind_for_mime, mime_for_path};
use crate::persist::{OutboxRecord, Payload};

impl Engine {
    pub(super) async fn on_command(&mut self, cmd: Command, ws: &mut Option<Ws>) -> Reply {
        let name = cmd.name();
        let result = match cmd {
            Command::Text { text, reply_to, id, session, retry_of } => {
                let id = id.unwrap_or_else(new_id);
                let rec = OutboxRecord {
                    id,
                    payload: Payload::Text { text, reply_to, session },
                    created_unix: unix_now(),
                    retry_of,
                };
                self.queue(rec).await
            }
            Command::File { path, caption, id, session, retry_of } => {
                self.queue_file(&path, caption, id, session, false, retry_of).await
            }
            Command::Audio { path, text, id, session, retry_of } => {
                self.queue_audio(&path, text, id, session, retry_of).await
            }
            Command::Prompt { prompt_id, option_id, text } => {
                self.session.answer_prompt(&prompt_id, option_id.as_deref(), text.as_deref()).map(|()| None)
            }
            Command::Cancel { id } => {
                let mut found = false;
                if let Some(h) = self.transfers.remove(&id) {
                    h.abort();
                    found = true;
                }
                found |= self.session.cancel(&id);
                if found {
                    let _ = self.persist.outbox_fail(&id, "cancelled", "cancelled");
                    self.emit(Event::Error {
                        code: "cancelled".into(),
                        text: "cancelled".into(),
                        id: Some(id.clone()),
                    })
                    .await;
                    Ok(Some(id))
                } else {
                    Err(Refusal::NothingToCancel)
                }
            }
            Command::Reconnect => {
                self.session.reconnect_now(now());
                Ok(None)
            }
            Command::Quit => {
                self.quit = true;
                if let Some(s) = ws.as_mut() {
                    let _ = tokio::time::timeout(Duration::from_secs(1), s.close(None)).await;
                }
                Ok(None)
            }
        };
        if let Err(r) = &result {
            self.emit(Event::Rejected { cmd: name.into(), code: r.code().into(), reason: r.to_string(), id: None })
                .await;
        }
        result
    }

    /// Validate, persist, then hand to the session (A-6: the outbox entry exists before anything is sent).
    async fn queue(&mut self, rec: OutboxRecord) -> Reply {
        let outgoing = self.outgoing_for(&rec)?;
        self.session.check(&outgoing)?;
        self.persist.outbox_insert(&rec)?;
        self.session.submit(&rec.id, rec.created_unix, outgoing)?;
        Ok(Some(rec.id))
    }

    /// The session item for a record (a v3 file is uploaded over HTTP first, G-9).
    fn outgoing_for(&self, rec: &OutboxRecord) -> Result<Outgoing, Refusal> {
        Ok(match &rec.payload {
            Payload::Text { text, reply_to, session } => {
                Outgoing::Text { text: text.clone(), reply_to: reply_to.clone(), session: session.clone() }
            }
            Payload::File { path, filename, mime, caption, session, .. } if self.cfg.dialect == Dialect::V3 => {
                Outgoing::V3File {
                    path: PathBuf::from(path),
                    filename: filename.clone(),
                    mime: mime.clone(),
                    caption: caption.clone(),
                    session: session.clone(),
                }
            }
            Payload::File { path, audio: true, caption, .. } => {
                let wav = std::fs::read(path)
                    .map_err(|e| Refusal::FileUnreadable(format!("could not read the recording: {}", io_text(&e))))?;
                Outgoing::Audio { wav: Arc::from(wav), text: caption.clone() }
            }
            Payload::File { path, filename, mime, caption, .. } => {
                // only the size now: the bytes are read from the outbox copy while the frames are written
                let size = std::fs::metadata(path)
                    .map_err(|e| Refusal::FileUnreadable(format!("could not read {filename}: {}", io_text(&e))))?
                    .len();
                Outgoing::MediaFile {
                    meta: UpMediaMeta {
                        id: rec.id.clone(),
                        kind: kind_for_mime(mime).into(),
                        mime: mime.clone(),
                        filename: filename.clone(),
                        caption: caption.clone(),
                    },
                    path: PathBuf::from(path),
                    size,
                }
            }
        })
    }

    async fn queue_file(
        &mut self,
        path: &str,
        caption: Option<String>,
        id: Option<String>,
        session: Option<String>,
        audio: bool,
        retry_of: Option<String>,
    ) -> Reply {
        let src = PathBuf::from(path);
        let name = src.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.to_string());
        let meta = tokio::fs::metadata(&src)
            .await
            .map_err(|e| Refusal::FileUnreadable(format!("cannot read {name}: {}", io_text(&e))))?;
        if !meta.is_file() {
            return Err(Refusal::NotAFile(name));
        }
        // a file the agent does not take is refused before it is copied anywhere.
        let features = self.session.features();
        if !(if audio { features.voice } else { features.files }) {
            let f = if audio { hermes_protocol::Feature::Voice } else { hermes_protocol::Feature::Files };
            return Err(Refusal::FeatureOff(f));
        }
        // G-9 decision: v3 has no client-side limit (the gateway answers `file_too_large` / HTTP 413)
        let limit = self.session.limits().max_media_bytes;
        if self.cfg.dialect == Dialect::Adapter && meta.len() > limit {
            return Err(hermes_protocol::media::MediaError::TooBig { size: meta.len(), limit }.into());
        }
        let filename =
            safe_filename(&src.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(), None);
        let mime = if audio { "audio/wav".to_string() } else { mime_for_path(&src) };
        let id = id.unwrap_or_else(new_id);
        // A copy in the outbox folder: the queued message survives the original being moved (nothing lost).
        let dir = self.cfg.outbox_dir.join(safe_filename(&id, None));
        tokio::fs::create_dir_all(&dir).await.map_err(|e| copy_refusal(&e))?;
        let copy = dir.join(&filename);
        tokio::fs::copy(&src, &copy).await.map_err(|e| copy_refusal(&e))?;
        let rec = OutboxRecord {
            id,
            payload: Payload::File {
                path: copy.to_string_lossy().into_owned(),
                filename,
                mime,
                caption,
                audio,
                session,
            },
            created_unix: unix_now(),
            retry_of,
        };
        let r = self.queue(rec).await;
        // the copy goes with a refusal, unless the id belongs to another message (its copy is that one's)
        if matches!(&r, Err(e) if !matches!(e, Refusal::IdInUse(_))) {
            let _ = tokio::fs::remove_dir_all(&dir).await;
        }
        r
    }

    async fn queue_audio(
        &mut self,
        path: &str,
        text: Option<String>,
        id: Option<String>,
        session: Option<String>,
        retry_of: Option<String>,
    ) -> Reply {
        if !self.session.features().voice {
            return Err(Refusal::FeatureOff(hermes_protocol::Feature::Voice));
        }
        let raw = tokio::fs::read(path)
            .await
            .map_err(|e| Refusal::FileUnreadable(format!("cannot read {path}: {}", io_text(&e))))?;
        // 16 kHz mono PCM16 WAV, whatever the input WAV was.
        let wav = hermes_voice::wav::to_hermes_wav(&raw)
            .map_err(|e| Refusal::FileUnreadable(format!("{path} is not a usable recording: {e}")))?;
        // the adapter takes at most 8 MiB of audio per message; v3 has no such limit (G-9 decision)
        let max_clip = match self.cfg.dialect {
            Dialect::Adapter => hermes_protocol::session::MAX_AUDIO_BYTES,
            Dialect::V3 => usize::MAX,
        };
        let clips = hermes_voice::wav::split_wav(&wav, max_clip)
            .map_err(|e| Refusal::FileUnreadable(format!("{path} is not a usable recording: {e}")))?;
        let base = id.unwrap_or_else(new_id);
        let tmp = tempdir_in(&self.cfg.outbox_dir).await?;
        let mut first = None;
        for (i, clip) in clips.iter().enumerate() {
            // longer recordings become several messages.
            let id = if i == 0 { base.clone() } else { format!("{base}-{}", i + 1) };
            let p = tmp.join(format!("voice-{}.wav", i + 1));
            tokio::fs::write(&p, clip).await.map_err(|e| copy_refusal(&e))?;
            let text = if i == 0 { text.clone() } else { None };
            let r =
                self.queue_file(&p.to_string_lossy(), text, Some(id), session.clone(), true, retry_of.clone()).await?;
            first = first.or(r);
        }
        let _ = tokio::fs::remove_dir_all(&tmp).await;
        Ok(first)
    }

    /// Cards still waiting from before this start (the store keeps them): answerable again.
    pub(super) fn load_waiting_cards(&mut self) {
        for (id, options) in self.persist.waiting_cards() {
            self.session.restore_card(&id, options);
        }
    }

    pub(super) fn load_outbox(&mut self) {
        let pending = match self.persist.outbox_pending() {
            Ok(p) => p,
            Err(e) => {
                warn!(%e, "could not load the outbox");
                return;
            }
        };
        for rec in pending {
            let id = rec.id.clone();
            let res = self.outgoing_for(&rec).and_then(|o| self.session.submit(&id, rec.created_unix, o));
            if let Err(r) = res {
                let _ = self.persist.outbox_fail(&id, r.code(), &r.to_string());
                self.batch.push(Event::Rejected {
                    cmd: rec.payload.kind().into(),
                    code: r.code().into(),
                    reason: r.to_string(),
                    id: Some(id),
                });
            }
        }
    }
}

fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

async fn tempdir_in(dir: &Path) -> Result<PathBuf, Refusal> {
    let p = dir.join(format!(".rec-{}", new_id()));
    tokio::fs::create_dir_all(&p).await.map_err(|e| copy_refusal(&e))?;
    Ok(p)
}

/// Copying a file into the outbox folder failed: the disk is full, or the file is unreadable.
fn copy_refusal(e: &std::io::Error) -> Refusal {
    if e.kind() == std::io::ErrorKind::StorageFull || e.raw_os_error() == Some(28) {
        Refusal::DiskFull
    } else {
        Refusal::FileUnreadable(format!("cannot prepare the upload: {}", io_text(e)))
    }
}
