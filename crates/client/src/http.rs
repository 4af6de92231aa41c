//! HTTP transfers: v3 media upload and download (G-9) and adapter `url` downloads. Bounded in size, streamed
//! straight to disk, with progress; cancelling is dropping the future (the caller aborts the task).

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::StreamExt as _;
use serde::Deserialize;
use tokio::io::AsyncWriteExt as _;
use url::Url;

use crate::files::unique_path;

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("only http and https downloads are allowed (got `{0}`)")]
    Scheme(String),
    #[error("the file is larger than the {limit}-byte limit")]
    TooBig { limit: u64 },
    #[error("the server answered {status}")]
    Status { status: u16 },
    #[error("the server refused the token (HTTP {status})")]
    Unauthorized { status: u16 },
    #[error("network error: {0}")]
    Network(String),
    #[error("could not write the file: {0}")]
    Disk(#[from] std::io::Error),
    #[error("unexpected answer from the server: {0}")]
    Protocol(String),
}

impl HttpError {
    pub fn code(&self) -> &'static str {
        match self {
            HttpError::TooBig { .. } => "too_big",
            HttpError::Unauthorized { .. } => "access_denied",
            HttpError::Disk(_) => "disk",
            HttpError::Scheme(_) => "bad_url",
            _ => "download_failed",
        }
    }
}

fn net(e: reqwest::Error) -> HttpError {
    // reqwest's message may contain the URL: drop it (a v3 URL could carry a token in other setups).
    HttpError::Network(e.without_url().to_string())
}

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Uploaded {
    pub media_id: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(rename = "type", default)]
    pub mime: Option<String>,
    #[serde(default)]
    pub size: Option<u64>,
}

#[derive(Clone)]
pub struct Http {
    client: reqwest::Client,
}

impl Http {
    pub fn new() -> Http {
        let client = reqwest::Client::builder()
            .use_preconfigured_tls((*crate::tls::client_config()).clone())
            .connect_timeout(Duration::from_secs(15))
            .read_timeout(Duration::from_secs(60))
            .redirect(reqwest::redirect::Policy::limited(5))
            .user_agent(concat!("hermes-desktop/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_default();
        Http { client }
    }

    /// Download `url` into `dir` as `filename` (made unique), at most `max_bytes`. `bearer` only for the gateway.
    pub async fn download(
        &self,
        url: &Url,
        bearer: Option<&str>,
        max_bytes: u64,
        dir: &Path,
        filename: &str,
        mut progress: impl FnMut(u64, u64) + Send,
    ) -> Result<(PathBuf, u64), HttpError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(HttpError::Scheme(url.scheme().to_string()));
        }
        let mut req = self.client.get(url.clone());
        if let Some(t) = bearer {
            req = req.bearer_auth(t);
        }
        let resp = req.send().await.map_err(net)?;
        let status = resp.status().as_u16();
        if status == 401 || status == 403 {
            return Err(HttpError::Unauthorized { status });
        }
        if !resp.status().is_success() {
            return Err(HttpError::Status { status });
        }
        let total = resp.content_length();
        if total.is_some_and(|n| n > max_bytes) {
            return Err(HttpError::TooBig { limit: max_bytes });
        }
        tokio::fs::create_dir_all(dir).await?;
        let tmp = dir.join(format!(".partial-{}", uuid::Uuid::new_v4()));
        let result = async {
            let mut file = tokio::fs::File::create(&tmp).await?;
            let mut done = 0u64;
            let mut stream = resp.bytes_stream();
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(net)?;
                done += chunk.len() as u64;
                if done > max_bytes {
                    return Err(HttpError::TooBig { limit: max_bytes });
                }
                file.write_all(&chunk).await?;
                progress(done, total.unwrap_or(0).max(done));
            }
            file.flush().await?;
            file.sync_all().await?;
            Ok(done)
        }
        .await;
        match result {
            Ok(done) => {
                let dest = unique_path(dir, filename);
                tokio::fs::rename(&tmp, &dest).await?;
                Ok((dest, done))
            }
            Err(e) => {
                let _ = tokio::fs::remove_file(&tmp).await;
                Err(e)
            }
        }
    }

    /// G-9 step 1: `POST {origin}/api/media/upload`, multipart part `file`, Bearer token.
    pub async fn upload(
        &self,
        origin: &Url,
        bearer: &str,
        path: &Path,
        filename: &str,
        mime: &str,
        progress: impl FnMut(u64, u64) + Send + 'static,
    ) -> Result<Uploaded, HttpError> {
        let url = origin.join("api/media/upload").map_err(|e| HttpError::Protocol(e.to_string()))?;
        let file = tokio::fs::File::open(path).await?;
        let len = file.metadata().await?.len();
        let progress = std::sync::Arc::new(std::sync::Mutex::new(progress));
        let mut sent = 0u64;
        let stream = tokio_util::io::ReaderStream::with_capacity(file, 64 * 1024).map(move |chunk| {
            if let Ok(c) = &chunk {
                sent += c.len() as u64;
                if let Ok(mut p) = progress.lock() {
                    p(sent, len);
                }
            }
            chunk
        });
        let part = reqwest::multipart::Part::stream_with_length(reqwest::Body::wrap_stream(stream), len)
            .file_name(filename.to_string())
            .mime_str(mime)
            .map_err(|e| HttpError::Protocol(e.to_string()))?;
        let form = reqwest::multipart::Form::new().part("file", part);
        let resp = self.client.post(url).bearer_auth(bearer).multipart(form).send().await.map_err(net)?;
        let status = resp.status().as_u16();
        if status == 401 || status == 403 {
            return Err(HttpError::Unauthorized { status });
        }
        if status == 413 {
            return Err(HttpError::TooBig { limit: len.saturating_sub(1) });
        }
        if !resp.status().is_success() {
            return Err(HttpError::Status { status });
        }
        let body = resp.bytes().await.map_err(net)?;
        serde_json::from_slice(&body).map_err(|e| HttpError::Protocol(e.to_string()))
    }
}

impl Default for Http {
    fn default() -> Self {
        Http::new()
    }
}
