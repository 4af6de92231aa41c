//! HTTP transfers: v3 media upload and download (G-9) and adapter `url` downloads (A-20). Both directions stream
//! between disk and socket (no whole file in memory), with progress; cancelling is dropping the future (the caller
//! aborts the task).
//!
//! A download is written to a hidden temporary file in the destination folder and renamed when complete. It stops
//! at the smallest of its limits — the protocol's (the adapter's per-file limit; none on v3), the user's download
//! cap, and the disk's free space less a reserve — and whatever ends it early (a limit, a network or disk error, a
//! cancel) removes the temporary file: no partial file is ever left under the final name or at all (G-9 decision).

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::StreamExt as _;
use serde::Deserialize;
use tokio::io::AsyncWriteExt as _;
use url::Url;

/// The user's download cap when none is configured: 2 GiB (G-9 decision).
pub const DEFAULT_MAX_DOWNLOAD_BYTES: u64 = 2 * 1024 * 1024 * 1024;
/// The media folder's quota when none is configured: 2 GiB.
pub const DEFAULT_MEDIA_QUOTA_BYTES: u64 = 2 * 1024 * 1024 * 1024;
/// Free space a download leaves on the disk, for the system and the app's own database.
pub const DEFAULT_KEEP_FREE_BYTES: u64 = 64 * 1024 * 1024;
/// Free space is measured again after this many bytes were written (other programs use the disk too).
const SPACE_RECHECK_BYTES: u64 = 64 * 1024 * 1024;
/// What the media folder holds is measured again after this many bytes: downloads running side by side each see the
/// others grow, so together they cannot go over the quota (by more than this much each).
const QUOTA_RECHECK_BYTES: u64 = 256 * 1024;

/// What bounds one download.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DownloadLimits {
    /// The protocol's per-file limit (adapter `max_media_bytes`, A-20); `u64::MAX` when there is none (v3).
    pub agent_max: u64,
    /// The user's download cap (a setting, [`DEFAULT_MAX_DOWNLOAD_BYTES`] by default).
    pub user_max: u64,
    /// A download stops before the disk holding the destination has less than this free.
    pub keep_free: u64,
    /// The media folder's quota and what it already holds: a download stops before `used` + its bytes go over.
    pub quota: u64,
    pub quota_used: u64,
}

impl Default for DownloadLimits {
    fn default() -> Self {
        DownloadLimits {
            agent_max: u64::MAX,
            user_max: DEFAULT_MAX_DOWNLOAD_BYTES,
            keep_free: DEFAULT_KEEP_FREE_BYTES,
            quota: u64::MAX,
            quota_used: 0,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("only http and https downloads are allowed (got `{0}`)")]
    Scheme(String),
    /// Over the agent's per-file limit (A-20).
    #[error("the file is larger than the agent's {} limit", human_bytes(*limit))]
    TooBig { limit: u64 },
    /// Over the user's download cap (G-9 decision).
    #[error("the file is larger than the download limit of {} (a setting)", human_bytes(*limit))]
    OverDownloadLimit { limit: u64 },
    /// The media folder's quota (a setting) has no room for the file.
    #[error("{}", quota_text(*quota, *used))]
    QuotaFull { quota: u64, used: u64 },
    /// Not enough free disk space for the file (G-9 decision).
    #[error("{}", no_space_text(*needed, *available))]
    NoSpace { needed: Option<u64>, available: u64 },
    /// v3: the gateway refused an upload as too large (HTTP 413 or `file_too_large`, G-9).
    #[error("{}", too_large_text(*size, detail.as_deref()))]
    FileTooLarge { size: u64, detail: Option<String> },
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
            HttpError::OverDownloadLimit { .. } => "download_too_big",
            HttpError::NoSpace { .. } => "download_no_space",
            HttpError::QuotaFull { .. } => MEDIA_QUOTA_FULL,
            HttpError::FileTooLarge { .. } => "file_too_large",
            HttpError::Unauthorized { .. } => "access_denied",
            HttpError::Disk(_) => "disk",
            HttpError::Scheme(_) => "bad_url",
            _ => "download_failed",
        }
    }
}

/// `1.5 MiB`, `2 GiB`, `900 bytes`: sizes in messages a person reads.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} bytes");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if v.fract() < 0.05 || v >= 100.0 { format!("{v:.0} {}", UNITS[unit]) } else { format!("{v:.1} {}", UNITS[unit]) }
}

fn no_space_text(needed: Option<u64>, available: u64) -> String {
    match needed {
        Some(n) => format!(
            "not enough free disk space for this file ({} needed, {} can be used)",
            human_bytes(n),
            human_bytes(available)
        ),
        None => format!("the disk is nearly full: the download stopped ({} could be used)", human_bytes(available)),
    }
}

/// The event code of a file refused because the media folder is over its quota.
pub const MEDIA_QUOTA_FULL: &str = "media_quota_full";

/// The sentence for [`HttpError::QuotaFull`] (also used for files that came whole over the socket).
pub fn quota_text(quota: u64, used: u64) -> String {
    format!(
        "the media folder is full ({} of its {} quota used): this file was not saved",
        human_bytes(used),
        human_bytes(quota)
    )
}

fn too_large_text(size: u64, detail: Option<&str>) -> String {
    let mut t = format!("the gateway refused the file: {} is over its size limit", human_bytes(size));
    if let Some(d) = detail.map(str::trim).filter(|d| !d.is_empty()) {
        // the gateway's own words, shortened and on one line (untrusted text)
        let d: String = d.chars().filter(|c| !c.is_control()).take(200).collect();
        t.push_str(&format!(" ({d})"));
    }
    t
}

fn net(e: reqwest::Error) -> HttpError {
    // reqwest's message may contain the URL: drop it (a v3 URL could carry a token in other setups).
    HttpError::Network(e.without_url().to_string())
}

/// Bytes that may still be written to the disk holding `dir`, keeping `keep_free` free; `None` when the free space
/// cannot be measured (then only the other limits apply).
fn room(dir: &Path, keep_free: u64) -> Option<u64> {
    fs4::available_space(dir).ok().map(|free| free.saturating_sub(keep_free))
}

/// Bytes of the regular files in `dir` and its sub-folders (partial downloads included: they are on their way in),
/// what counts against the media folder's quota. Links are not followed.
pub async fn folder_usage(dir: &Path) -> u64 {
    let mut total = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(mut rd) = tokio::fs::read_dir(&d).await else { continue };
        while let Ok(Some(e)) = rd.next_entry().await {
            let Ok(ft) = e.file_type().await else { continue };
            if ft.is_dir() {
                stack.push(e.path());
            } else if ft.is_file()
                && let Ok(m) = e.metadata().await
            {
                total = total.saturating_add(m.len());
            }
        }
    }
    total
}

/// A temporary file that is removed when dropped unless [`Partial::keep`] was called: whatever ends a download
/// early — an error, a limit, or the task being aborted mid-write (a cancel) — leaves nothing behind.
struct Partial {
    path: Option<PathBuf>,
}

impl Partial {
    fn keep(mut self) {
        self.path = None;
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        if let Some(p) = self.path.take() {
            let _ = std::fs::remove_file(p);
        }
    }
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

/// An error body of the gateway: `{"code": "...", "text": "..."}` (G-7's codes), also accepted nested in `error`.
#[derive(Debug, Default, Deserialize)]
struct ErrorBody {
    #[serde(default)]
    code: Option<String>,
    #[serde(default, alias = "message")]
    text: Option<String>,
    #[serde(default)]
    error: Option<Box<ErrorBody>>,
}

impl ErrorBody {
    fn parse(body: &[u8]) -> ErrorBody {
        let b: ErrorBody = serde_json::from_slice(body).unwrap_or_default();
        match b.error {
            Some(inner) if b.code.is_none() => *inner,
            _ => b,
        }
    }
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

    /// Download `url` into `dir` as `filename` (made unique) within `limits`. `bearer` only for the gateway.
    /// Returns the file's path and size.
    pub async fn download(
        &self,
        url: &Url,
        bearer: Option<&str>,
        limits: DownloadLimits,
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
        let over = |n: u64, quota_used: u64| {
            if n > limits.agent_max {
                Some(HttpError::TooBig { limit: limits.agent_max })
            } else if n > limits.user_max {
                Some(HttpError::OverDownloadLimit { limit: limits.user_max })
            } else if n.saturating_add(quota_used) > limits.quota {
                Some(HttpError::QuotaFull { quota: limits.quota, used: quota_used })
            } else {
                None
            }
        };
        let total = resp.content_length();
        if let Some(e) = total.and_then(|t| over(t, limits.quota_used)) {
            return Err(e);
        }
        tokio::fs::create_dir_all(dir).await?;
        // what may still be written before the disk is too full; measured again every SPACE_RECHECK_BYTES
        let mut allowance = room(dir, limits.keep_free);
        if let (Some(n), Some(a)) = (total, allowance)
            && n > a
        {
            return Err(HttpError::NoSpace { needed: Some(n), available: a });
        }
        let tmp = dir.join(format!(".partial-{}", uuid::Uuid::new_v4()));
        // declared before the file, so dropped after it: the file is closed before it is removed
        let partial = Partial { path: Some(tmp.clone()) };
        let mut file = tokio::fs::File::create(&tmp).await?;
        let mut done = 0u64;
        let mut since_check = 0u64;
        // what the media folder holds besides this file
        let (mut quota_base, mut since_quota) = (limits.quota_used, 0u64);
        let mut stream = resp.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(net)?;
            let n = chunk.len() as u64;
            if limits.quota != u64::MAX && since_quota >= QUOTA_RECHECK_BYTES {
                // this file's own partial is in the folder too: `done` bytes of it
                quota_base = folder_usage(dir).await.saturating_sub(done);
                since_quota = 0;
            }
            if let Some(e) = over(done + n, quota_base) {
                return Err(e);
            }
            if since_check >= SPACE_RECHECK_BYTES || allowance.is_some_and(|a| n > a) {
                allowance = room(dir, limits.keep_free);
                since_check = 0;
            }
            if let Some(a) = allowance {
                if n > a {
                    let needed = total.map(|t| t.saturating_sub(done));
                    return Err(HttpError::NoSpace { needed, available: a });
                }
                allowance = Some(a - n);
            }
            file.write_all(&chunk).await?;
            done += n;
            since_check += n;
            since_quota += n;
            progress(done, total.unwrap_or(0).max(done));
        }
        file.flush().await?;
        file.sync_all().await?;
        drop(file);
        let dest = crate::files::place_new(&tmp, dir, filename)?;
        partial.keep();
        Ok((dest, done))
    }

    /// G-9 step 1: `POST {origin}/api/media/upload`, multipart part `file`, Bearer token. The file is streamed from
    /// disk. A refusal as too large (HTTP 413, or an error body with `file_too_large`) is
    /// [`HttpError::FileTooLarge`]: the gateway decides the limit (G-9 decision), not the app.
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
        if !resp.status().is_success() {
            // the error body is small; a gateway that sends a large one gets read no further than 64 KiB
            let body = read_at_most(resp, 64 * 1024).await;
            let err = ErrorBody::parse(&body);
            if status == 413 || err.code.as_deref() == Some("file_too_large") {
                return Err(HttpError::FileTooLarge { size: len, detail: err.text });
            }
            return Err(HttpError::Status { status });
        }
        let body = resp.bytes().await.map_err(net)?;
        serde_json::from_slice(&body).map_err(|e| HttpError::Protocol(e.to_string()))
    }
}

/// The first `max` bytes of a response body (what arrived of it; errors end it).
async fn read_at_most(resp: reqwest::Response, max: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(Ok(chunk)) = stream.next().await {
        let room = max.saturating_sub(out.len());
        out.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if out.len() >= max {
            break;
        }
    }
    out
}

impl Default for Http {
    fn default() -> Self {
        Http::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt as _;

    /// A one-shot HTTP server on loopback: answers every request with `head` and then `body` in 64 KiB pieces, and
    /// stays open afterwards when `hang` (a transfer that stalls, to be cancelled).
    async fn serve(head: String, body: Vec<u8>, hang: bool) -> Url {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = l.accept().await {
                let (head, body) = (head.clone(), body.clone());
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let _ = s.read(&mut buf).await;
                    let _ = s.write_all(head.as_bytes()).await;
                    for piece in body.chunks(64 * 1024) {
                        if s.write_all(piece).await.is_err() {
                            return;
                        }
                    }
                    if hang {
                        std::future::pending::<()>().await;
                    }
                });
            }
        });
        Url::parse(&format!("http://{addr}/file")).unwrap()
    }

    /// A chunked response (no Content-Length: the size is only known by reading it).
    fn chunked(body: &[u8]) -> (String, Vec<u8>) {
        let mut out = Vec::new();
        for piece in body.chunks(16 * 1024) {
            out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
            out.extend_from_slice(piece);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"0\r\n\r\n");
        ("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n".into(), out)
    }

    fn sized(body: &[u8]) -> (String, Vec<u8>) {
        (format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n", body.len()), body.to_vec())
    }

    fn files_in(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default()
    }

    fn limits(user_max: u64) -> DownloadLimits {
        DownloadLimits { agent_max: u64::MAX, user_max, keep_free: 0, ..DownloadLimits::default() }
    }

    const MIB: usize = 1024 * 1024;

    #[tokio::test]
    async fn g9_a_download_is_streamed_to_disk_and_renamed_when_whole() {
        let body: Vec<u8> = (0..3 * MIB).map(|i| (i % 253) as u8).collect();
        let (head, wire) = chunked(&body);
        let url = serve(head, wire, false).await;
        let dir = tempfile::tempdir().unwrap();
        let mut seen = Vec::new();
        let (path, size) = Http::new()
            .download(&url, None, limits(4 * MIB as u64), dir.path(), "../x.bin", |d, _| seen.push(d))
            .await
            .unwrap();
        assert_eq!((path.clone(), size), (dir.path().join("x.bin"), body.len() as u64));
        assert_eq!(std::fs::read(&path).unwrap(), body);
        assert!(seen.len() > 1 && seen.windows(2).all(|w| w[0] < w[1]), "progress while streaming");
        assert_eq!(files_in(dir.path()), vec!["x.bin"]);
    }

    /// G-9 decision: a download over the user's cap stops with a clear error and leaves no file, whether the size
    /// is announced (refused before anything is written) or only found out while streaming.
    #[tokio::test]
    async fn g9_a_download_over_the_cap_stops_and_leaves_no_file() {
        let body = vec![7u8; 2 * MIB];
        for (head, wire) in [sized(&body), chunked(&body)] {
            let url = serve(head, wire, false).await;
            let dir = tempfile::tempdir().unwrap();
            let mut written = 0;
            let err = Http::new()
                .download(&url, None, limits(MIB as u64), dir.path(), "big.bin", |d, _| written = d)
                .await
                .unwrap_err();
            assert!(matches!(err, HttpError::OverDownloadLimit { limit } if limit == MIB as u64), "{err:?}");
            assert_eq!(err.code(), "download_too_big");
            assert_eq!(err.to_string(), "the file is larger than the download limit of 1 MiB (a setting)");
            assert!(written <= MIB as u64, "never more than the cap on disk ({written})");
            assert_eq!(files_in(dir.path()), Vec::<String>::new(), "no partial file left");
        }
        // the agent's own per-file limit (adapter, A-20) is named as such
        let (head, wire) = chunked(&body);
        let url = serve(head, wire, false).await;
        let dir = tempfile::tempdir().unwrap();
        let l = DownloadLimits { agent_max: MIB as u64, ..limits(u64::MAX) };
        let err = Http::new().download(&url, None, l, dir.path(), "big.bin", |_, _| {}).await.unwrap_err();
        assert_eq!(err.code(), "too_big");
        assert_eq!(files_in(dir.path()), Vec::<String>::new());
    }

    /// A-20: a `url` download counts against the media folder's quota: one that would go over is refused with
    /// `media_quota_full` (announced size or found out while streaming) and leaves nothing, not even a partial.
    #[tokio::test]
    async fn a20_a_download_over_the_media_quota_is_refused_and_leaves_no_file() {
        let body = vec![3u8; 2 * MIB];
        for (head, wire) in [sized(&body), chunked(&body)] {
            let url = serve(head, wire, false).await;
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("held.bin"), vec![0u8; 2 * MIB]).unwrap();
            let used = folder_usage(dir.path()).await;
            assert_eq!(used, 2 * MIB as u64);
            let l = DownloadLimits { quota: 3 * MIB as u64, quota_used: used, ..limits(u64::MAX) };
            let err = Http::new().download(&url, None, l, dir.path(), "q.bin", |_, _| {}).await.unwrap_err();
            assert!(
                matches!(err, HttpError::QuotaFull { quota, used } if quota == 3 * MIB as u64 && used == 2 * MIB as u64)
            );
            assert_eq!(err.code(), MEDIA_QUOTA_FULL);
            assert!(err.to_string().starts_with("the media folder is full (2 MiB of its 3 MiB quota used)"), "{err}");
            assert_eq!(files_in(dir.path()), vec!["held.bin"], "no partial file left");
        }
    }

    /// G-9 decision: a download stops at the free disk space (less the reserve), with a clear error and no file.
    /// The reserve stands in for a full disk: asked to keep more free than the disk has, nothing can be written.
    #[tokio::test]
    async fn g9_a_download_stops_at_the_free_disk_space_and_leaves_no_file() {
        let body = vec![1u8; MIB];
        let full = DownloadLimits {
            agent_max: u64::MAX,
            user_max: u64::MAX,
            keep_free: u64::MAX / 2,
            ..DownloadLimits::default()
        };
        for (head, wire) in [sized(&body), chunked(&body)] {
            let announced = head.contains("content-length");
            let url = serve(head, wire, false).await;
            let dir = tempfile::tempdir().unwrap();
            let err = Http::new().download(&url, None, full, dir.path(), "f.bin", |_, _| {}).await.unwrap_err();
            match &err {
                HttpError::NoSpace { needed, available: 0 } => {
                    assert_eq!(needed.is_some(), announced, "{err}");
                }
                other => panic!("{other:?}"),
            }
            assert_eq!(err.code(), "download_no_space");
            assert_eq!(files_in(dir.path()), Vec::<String>::new(), "no partial file left");
        }
        // with room to spare the same file downloads
        let (head, wire) = chunked(&body);
        let url = serve(head, wire, false).await;
        let dir = tempfile::tempdir().unwrap();
        let ok = DownloadLimits { keep_free: DEFAULT_KEEP_FREE_BYTES, ..full };
        Http::new().download(&url, None, ok, dir.path(), "f.bin", |_, _| {}).await.unwrap();
        assert_eq!(files_in(dir.path()), vec!["f.bin"]);
    }

    /// A cancel (the task aborted, its future dropped mid-transfer) leaves no file either.
    #[tokio::test]
    async fn g9_a_cancelled_download_leaves_no_file() {
        let body = vec![3u8; MIB];
        let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", 4 * MIB);
        let url = serve(head, body, true).await;
        let dir = tempfile::tempdir().unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let d = dir.path().to_path_buf();
        let task = tokio::spawn(async move {
            Http::new()
                .download(&url, None, limits(u64::MAX), &d, "slow.bin", move |done, _| {
                    let _ = tx.send(done);
                })
                .await
        });
        // part of the file is on disk, then the rest never comes
        while rx.recv().await.expect("progress") < MIB as u64 {}
        assert_eq!(files_in(dir.path()).len(), 1, "the partial file exists while downloading");
        task.abort();
        assert!(task.await.unwrap_err().is_cancelled());
        assert_eq!(files_in(dir.path()), Vec::<String>::new(), "no partial file left after a cancel");
    }

    #[test]
    fn sizes_read_like_a_person_writes_them() {
        assert_eq!(human_bytes(900), "900 bytes");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(8 * 1024 * 1024), "8 MiB");
        assert_eq!(human_bytes(DEFAULT_MAX_DOWNLOAD_BYTES), "2 GiB");
        assert_eq!(human_bytes(u64::MAX), "16777216 TiB");
    }

    #[test]
    fn g9_gateway_error_bodies_are_read_flat_or_nested() {
        let b = ErrorBody::parse(br#"{"code":"file_too_large","text":"max 100MB"}"#);
        assert_eq!((b.code.as_deref(), b.text.as_deref()), (Some("file_too_large"), Some("max 100MB")));
        let b = ErrorBody::parse(br#"{"error":{"code":"file_too_large","message":"too big"}}"#);
        assert_eq!((b.code.as_deref(), b.text.as_deref()), (Some("file_too_large"), Some("too big")));
        let b = ErrorBody::parse(b"<html>413 Request Entity Too Large</html>");
        assert_eq!((b.code, b.text), (None, None));
        let e = HttpError::FileTooLarge { size: 20 * 1024 * 1024, detail: Some("limit\n is 10 MB".into()) };
        assert_eq!(e.to_string(), "the gateway refused the file: 20 MiB is over its size limit (limit is 10 MB)");
        assert_eq!(e.code(), "file_too_large");
    }
}
