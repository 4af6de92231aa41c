//! HTTP transfers beside the socket: downloads of received files (A-20, G-9) and the v3 uploads the session asks
//! for (G-9), each a task whose result comes back to the engine's loop.

use std::path::{Path, PathBuf};

use hermes_protocol::media::MediaMeta;
use hermes_protocol::session::{DownloadSource, UploadFailure};
use hermes_protocol::v3::MediaDescriptor;
use hermes_protocol::{Direction, Event, Refusal};
use url::Url;

use super::{Engine, Internal, now};
use crate::files;
use crate::http::HttpError;
use crate::policy;

impl Engine {
    pub(super) fn start_download(
        &mut self,
        meta: MediaMeta,
        source: DownloadSource,
        max_bytes: u64,
        session: Option<String>,
    ) {
        let (url, bearer) = match &source {
            DownloadSource::Url(u) => match Url::parse(u) {
                // an agent-given URL gets no credentials.
                Ok(u) => (u, None),
                Err(_) => {
                    let _ = self.internal.send(Internal::DownloadFailed {
                        id: meta.id.clone(),
                        caption: meta.caption.clone(),
                        session: session.clone(),
                        error: HttpError::Scheme("invalid url".into()),
                    });
                    return;
                }
            },
            DownloadSource::V3Media(media_id) => {
                let origin = policy::http_origin(&self.url);
                let Ok(u) = origin.join(&format!("media/{}", urlencode(media_id))) else { return };
                (u, Some(self.cfg.token.expose().to_string()))
            }
        };
        let http = self.http.clone();
        let tx = self.internal.clone();
        let dir = self.cfg.media_dir.clone();
        let id = meta.id.clone();
        let mut limits = crate::http::DownloadLimits {
            agent_max: max_bytes,
            user_max: self.cfg.max_download_bytes,
            keep_free: self.cfg.keep_free_bytes,
            quota: self.cfg.media_quota_bytes,
            quota_used: 0,
        };
        let task = tokio::spawn(async move {
            // what the media folder holds now: the download stops before going over the quota
            limits.quota_used = super::quota::used(&dir).await;
            let ptx = tx.clone();
            let pid = meta.id.clone();
            let mut last = 0u64;
            let res = http
                .download(&url, bearer.as_deref(), limits, &dir, &meta.filename, move |done, total| {
                    if done == total || done - last >= 256 * 1024 {
                        last = done;
                        let _ = ptx.send(Internal::Event(Event::Progress {
                            id: pid.clone(),
                            direction: Direction::Down,
                            done,
                            total,
                        }));
                    }
                })
                .await;
            let _ = tx.send(match res {
                Ok((path, size)) => Internal::Downloaded { meta, path, size, session },
                Err(error) => Internal::DownloadFailed { id: meta.id, caption: meta.caption, session, error },
            });
        });
        self.transfers.insert(id, task.abort_handle());
    }

    /// v3: carry out the session's [`Io::Upload`] (G-9) and report how it went.
    pub(super) fn start_upload(&mut self, id: String, path: PathBuf, filename: String, mime: String) {
        let origin = policy::http_origin(&self.url);
        let token = self.cfg.token.expose().to_string();
        let http = self.http.clone();
        let tx = self.internal.clone();
        let tid = id.clone();
        let task = tokio::spawn(async move {
            let ptx = tx.clone();
            let pid = id.clone();
            let res = http
                .upload(&origin, &token, &path, &filename, &mime, move |done, total| {
                    let _ = ptx.send(Internal::Event(Event::Progress {
                        id: pid.clone(),
                        direction: Direction::Up,
                        done,
                        total,
                    }));
                })
                .await;
            let _ = tx.send(match res {
                Ok(up) => {
                    let size = up.size.unwrap_or_else(|| std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0));
                    let media =
                        describe(&path, &up.media_id, up.name.unwrap_or(filename), up.mime.unwrap_or(mime), size);
                    Internal::Uploaded { id, media }
                }
                Err(error) => Internal::UploadFailed { id, error },
            });
        });
        self.transfers.insert(tid, task.abort_handle());
    }

    pub(super) async fn on_internal(&mut self, msg: Internal) {
        match msg {
            Internal::Event(ev) => self.emit(ev).await,
            Internal::Downloaded { meta, path, size, session } => {
                self.transfers.remove(&meta.id);
                self.emit(media_event(&meta, &path, size, session)).await;
            }
            Internal::DownloadFailed { id, caption, session, error } => {
                self.transfers.remove(&id);
                self.refuse_file(id, caption, session, error.code(), format!("download failed: {error}")).await;
            }
            Internal::Uploaded { id, media } => {
                self.transfers.remove(&id);
                self.session.handle_upload_done(&id, media);
            }
            Internal::UploadFailed { id, error } => {
                self.transfers.remove(&id);
                let failure = match error {
                    // a passing failure: the session retries after a backoff delay
                    HttpError::Network(_) | HttpError::Status { status: 500..=599 } => {
                        UploadFailure::Passing(error.to_string())
                    }
                    HttpError::FileTooLarge { .. } => UploadFailure::Final(Refusal::FileTooLarge(error.to_string())),
                    _ => UploadFailure::Final(Refusal::UploadFailed(error.to_string())),
                };
                self.session.handle_upload_failed(&id, failure, now());
            }
        }
    }
}

pub(super) fn media_event(meta: &MediaMeta, path: &Path, size: u64, session: Option<String>) -> Event {
    Event::Media {
        id: meta.id.clone(),
        kind: meta.kind.clone(),
        mime: meta.mime.clone(),
        filename: path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| meta.filename.clone()),
        caption: meta.caption.clone(),
        path: path.to_string_lossy().into_owned(),
        size,
        session,
    }
}

/// G-4b: fill what can be read from the file (image size from its header, a WAV's duration, a video's size and
/// duration from its container).
fn describe(path: &Path, media_id: &str, name: String, mime: String, size: u64) -> MediaDescriptor {
    let mut d = MediaDescriptor {
        id: media_id.into(),
        name: Some(name),
        mime,
        size,
        width: None,
        height: None,
        duration: None,
    };
    if d.mime == "audio/wav" || d.mime == "audio/x-wav" {
        d.name = None; // voice carries no name (§4)
        d.duration = std::fs::read(path).ok().and_then(|b| hermes_voice::wav::duration_secs(&b));
    } else if d.mime.starts_with("image/")
        && let Ok(b) = crate::mediainfo::head(path)
        && let Some((w, h)) = files::image_size(&b)
    {
        d.width = Some(w);
        d.height = Some(h);
    } else if d.mime.starts_with("video/") {
        let v = crate::mediainfo::video(path);
        (d.width, d.height, d.duration) = (v.width, v.height, v.duration);
    }
    d
}

fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}
