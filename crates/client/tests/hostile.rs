//! A hostile agent: a raw WebSocket server (tokio-tungstenite) and a raw HTTP server in this test, feeding the engine
//! everything the spec says it must survive (A-7, A-19, A-20, A-22): frames over 16 MiB, invalid UTF-8 / base64 /
//! JSON, 10,000 unknown frames per second, media with `parts` = 1,000,000, endless non-final chunks, a `url`
//! pointing at a 10 GB stream (generated, never stored) and at a redirect loop, and filenames with traversal,
//! reserved device names and control characters. It also announces `max_media_bytes` = 10^15 and streams 8 files ×
//! 2048 parts (A-3, A-19: our limit and a fixed buffer hold), and sends programs dressed as documents (A-20): an
//! executable labelled `application/pdf` under a double extension, a program named `.pdf`, names hiding their end
//! behind bidi and invisible characters, `COM¹`/`LPT¹`/`CONIN$`/`CONOUT$`, and one name twice.
//!
//! For each: a clear event (an `error` with a code, or a `disconnected` with the reason), the engine lives on (the
//! connection stays, or it reconnects), memory stays bounded (peak RSS of this process is printed and checked
//! against a generous bound), and nothing is written outside the media folder (the temporary tree is walked).

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use futures_util::stream::SplitSink;
use futures_util::{SinkExt as _, StreamExt as _};
use hermes_protocol::{Dialect, Event};
use tokio::io::AsyncWriteExt as _;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Mutex;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};

type Sink = SplitSink<WebSocketStream<TcpStream>, Message>;

/// The hostile agent: accepts every connection, answers `hello` with `ready`, then sends what the test tells it.
struct Peer {
    url: String,
    sink: Arc<Mutex<Option<Sink>>>,
    connections: Arc<AtomicUsize>,
}

impl Peer {
    async fn start() -> Peer {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("ws://{}/ws", l.local_addr().unwrap());
        let sink: Arc<Mutex<Option<Sink>>> = Arc::default();
        let connections = Arc::new(AtomicUsize::new(0));
        let (s2, c2) = (sink.clone(), connections.clone());
        tokio::spawn(async move {
            while let Ok((tcp, _)) = l.accept().await {
                let Ok(ws) = tokio_tungstenite::accept_async(tcp).await else { continue };
                let (mut tx, mut rx) = ws.split();
                // hello → ready (A-1, A-3)
                if !matches!(rx.next().await, Some(Ok(Message::Text(_)))) {
                    continue;
                }
                // an agent that would set our limits (A-3): 10^15 bytes per file
                let ready =
                    r#"{"t":"ready","session":"mobile:hostile","capabilities":{"max_media_bytes":1000000000000000}}"#;
                // counted and installed before the client can see `ready` (a test that waits for it then checks the
                // count and sends on the new connection)
                let mut sink = s2.lock().await;
                c2.fetch_add(1, Ordering::SeqCst);
                if tx.send(Message::text(ready)).await.is_err() {
                    continue;
                }
                *sink = Some(tx);
                drop(sink);
                // read (and so answer pings) until the client goes
                tokio::spawn(async move { while let Some(Ok(_)) = rx.next().await {} });
            }
        });
        Peer { url, sink, connections }
    }

    async fn send(&self, msg: Message) {
        let mut g = self.sink.lock().await;
        let s = g.as_mut().expect("a client is connected");
        let _ = s.send(msg).await;
    }

    async fn text(&self, t: &str) {
        self.send(Message::text(t)).await;
    }

    /// Many frames without a flush per frame (fast).
    async fn flood(&self, frames: impl Iterator<Item = String>) {
        let mut g = self.sink.lock().await;
        let s = g.as_mut().expect("a client is connected");
        for f in frames {
            if s.feed(Message::text(f)).await.is_err() {
                return;
            }
        }
        let _ = s.flush().await;
    }
}

/// A raw HTTP/1.1 server: `/huge` streams zeros forever (chunked, no length), `/huge-len` announces 10 GB, `/loop`
/// redirects to itself. Counts the bytes it served.
async fn http_server() -> (String, Arc<AtomicU64>) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", l.local_addr().unwrap());
    let served = Arc::new(AtomicU64::new(0));
    let s2 = served.clone();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = l.accept().await {
            let served = s2.clone();
            tokio::spawn(async move {
                let Some(req) = read_request_head(&mut tcp).await else { return };
                let line = String::from_utf8_lossy(&req).lines().next().unwrap_or("").to_string();
                let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                let zeros = vec![0u8; 64 * 1024];
                match path.as_str() {
                    "/huge" => {
                        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
                        if tcp.write_all(head.as_bytes()).await.is_err() {
                            return;
                        }
                        let chunk_head = format!("{:x}\r\n", zeros.len());
                        // 10 GB at most, generated on the fly
                        while served.load(Ordering::SeqCst) < 10 * 1024 * 1024 * 1024 {
                            if tcp.write_all(chunk_head.as_bytes()).await.is_err()
                                || tcp.write_all(&zeros).await.is_err()
                                || tcp.write_all(b"\r\n").await.is_err()
                            {
                                return;
                            }
                            served.fetch_add(zeros.len() as u64, Ordering::SeqCst);
                        }
                    }
                    "/huge-len" => {
                        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 10737418240\r\n\r\n";
                        if tcp.write_all(head.as_bytes()).await.is_err() {
                            return;
                        }
                        for _ in 0..16 {
                            if tcp.write_all(&zeros).await.is_err() {
                                return;
                            }
                            served.fetch_add(zeros.len() as u64, Ordering::SeqCst);
                        }
                    }
                    _ => {
                        let head = format!(
                            "HTTP/1.1 302 Found\r\nLocation: {path}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        );
                        let _ = tcp.write_all(head.as_bytes()).await;
                    }
                }
            });
        }
    });
    (base, served)
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
}

fn is_error(code: &'static str) -> impl FnMut(&Event) -> bool {
    move |e| matches!(e, Event::Error { code: c, .. } if c == code)
}

/// The engine still takes a normal reply on the current connection.
async fn alive(c: &mut Client, peer: &Peer, n: u32) {
    eprintln!("hostile: step {n}: peak RSS so far {:.1} MiB", peak_rss_kib() as f64 / 1024.0);
    let id = format!("alive-{n}");
    peer.text(&format!(r#"{{"t":"message","id":"{id}","text":"still here","final":true}}"#)).await;
    c.wait(20, |e| matches!(e, Event::Message { id: i, final_: true, .. } if *i == id)).await;
}

/// After a frame that ends the connection: the engine says why, reconnects, and works.
async fn reconnects(c: &mut Client, peer: &Peer, before: usize, n: u32) {
    c.wait(20, |e| matches!(e, Event::Ready { .. })).await;
    assert!(peer.connections.load(Ordering::SeqCst) > before, "a new connection");
    alive(c, peer, n).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_agent_gets_clear_errors_bounded_memory_and_no_file_outside_the_media_folder() {
    let peer = Peer::start().await;
    let (http, served) = http_server().await;
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let media = data.join("media");
    let mut cfg = config(&peer.url, Dialect::Adapter, hermes_devserver::DEV_TOKEN, "hostile-1", &data);
    cfg.seed = 1;
    // our own per-file limit (the app's setting): the agent's 10^15 is cut to it, and it sizes the buffer (8 MiB)
    cfg.max_media_bytes = 8 * 1024 * 1024;
    let mut c = start(cfg);
    let ready = c.wait(10, |e| matches!(e, Event::Ready { .. })).await;
    let Event::Ready { features, .. } = ready else { unreachable!() };
    assert_eq!(features.max_file_bytes, Some(8 * 1024 * 1024), "our limit, not the agent's 10^15");
    let rss_start = peak_rss_kib();
    let mut n = 0;
    let mut next = || {
        n += 1;
        n
    };

    // A-19: a frame over 16 MiB ends the connection with a clear reason (the WebSocket layer refuses to read it)
    let before = peer.connections.load(Ordering::SeqCst);
    let big = format!(r#"{{"t":"message","id":"big","text":"{}","final":true}}"#, "x".repeat(17 * 1024 * 1024));
    peer.text(&big).await;
    drop(big);
    let ev = c.wait(20, |e| matches!(e, Event::Disconnected { .. })).await;
    let Event::Disconnected { reason, .. } = ev else { unreachable!() };
    assert!(reason.contains("too large") || reason.contains("too long"), "clear reason: {reason}");
    reconnects(&mut c, &peer, before, next()).await;

    // invalid UTF-8 in a text frame: a protocol error, the connection ends and comes back
    let before = peer.connections.load(Ordering::SeqCst);
    peer.send(Message::Frame(Frame::message(vec![b'{', 0xff, 0xfe, b'}'], OpCode::Data(Data::Text), true))).await;
    let ev = c.wait(20, |e| matches!(e, Event::Disconnected { .. })).await;
    let Event::Disconnected { reason, .. } = ev else { unreachable!() };
    assert!(reason.to_lowercase().contains("utf"), "clear reason: {reason}");
    reconnects(&mut c, &peer, before, next()).await;

    // invalid JSON, a lone surrogate, a wrong type: `malformed_frame` (at most one a second), the connection stays
    let conns = peer.connections.load(Ordering::SeqCst);
    for junk in [r#"{"t":"message","id":"#, r#"{"t":"message","id":"s","text":"\udc00","final":true}"#, "[1,2,3]"] {
        tokio::time::sleep(Duration::from_millis(1100)).await;
        peer.text(junk).await;
        c.wait(10, is_error("malformed_frame")).await;
    }
    alive(&mut c, &peer, next()).await;

    // invalid base64 in a media frame: `bad_base64` naming the file
    peer.text(r#"{"t":"media","id":"b64","kind":"document","mime":"text/plain","filename":"x.txt","part":0,"parts":1,"final":true,"data":"@@not base64@@"}"#).await;
    c.wait(10, |e| matches!(e, Event::Error { code, id: Some(id), .. } if code == "bad_base64" && id == "b64")).await;

    // media with parts = 1,000,000: refused at the first frame (A-19: parts ≤ 2048), nothing buffered
    peer.text(r#"{"t":"media","id":"million","kind":"document","mime":"text/plain","filename":"m.txt","part":0,"parts":1000000,"data":"aGVsbG8="}"#).await;
    c.wait(10, |e| matches!(e, Event::Error { code, id: Some(id), .. } if code == "bad_frame" && id == "million"))
        .await;
    alive(&mut c, &peer, next()).await;

    // 10,000 unknown frames in about a second: ignored silently (A-7), the connection stays
    let t = std::time::Instant::now();
    for batch in 0..10 {
        peer.flood((0..1000).map(|i| format!(r#"{{"t":"sticker","id":"s{batch}-{i}","blob":"{}"}}"#, "z".repeat(64))))
            .await;
        tokio::time::sleep(Duration::from_millis(90)).await;
    }
    alive(&mut c, &peer, next()).await;
    eprintln!("hostile: 10,000 unknown frames taken in {:.2} s", t.elapsed().as_secs_f64());
    assert_eq!(peer.connections.load(Ordering::SeqCst), conns, "unknown frames never cost the connection");

    // endless non-final chunks of one reply: bounded (4 MiB per reply), a clear `bad_reply`, the connection stays
    let piece = "y".repeat(16 * 1024);
    peer.flood((0..400u32).map(|i| {
        format!(
            r#"{{"t":"message","id":"endless","text":"{piece}","chunk":{{"index":{i},"total":4096}},"final":false}}"#
        )
    }))
    .await;
    c.wait_forget(20, is_error("bad_reply")).await;
    // endless growing edits of another reply, never final
    peer.flood((0..300u32).map(|i| {
        format!(
            r#"{{"t":"message","id":"edits","text":"{}","edit":true,"final":false}}"#,
            "e".repeat(16 * 1024 + i as usize)
        )
    }))
    .await;
    // endless non-final media parts: refused once over the buffer limit
    let part = base64_of(&vec![1u8; 512 * 1024]);
    peer.flood((0..40u32).map(|i| {
        format!(r#"{{"t":"media","id":"nonfinal","kind":"document","mime":"text/plain","filename":"n.bin","part":{i},"parts":2048,"data":"{part}"}}"#)
    }))
    .await;
    c.wait_forget(20, |e| matches!(e, Event::Error { id: Some(id), .. } if id == "nonfinal")).await;
    alive(&mut c, &peer, next()).await;
    assert_eq!(peer.connections.load(Ordering::SeqCst), conns, "floods never cost the connection");

    // A-20 `url`: a 10 GB stream without a length is cut at the limit; one that announces 10 GB is refused at once;
    // a redirect loop is a clear error. Nothing of them is left on disk.
    let media_frame = |id: &str, path: &str| {
        format!(
            r#"{{"t":"media","id":"{id}","kind":"document","mime":"application/octet-stream","filename":"{id}.bin","part":0,"parts":1,"final":true,"url":"{http}{path}"}}"#
        )
    };
    peer.text(&media_frame("stream10g", "/huge")).await;
    c.wait(60, |e| matches!(e, Event::Error { code, id: Some(id), .. } if code == "too_big" && id == "stream10g"))
        .await;
    let pulled = served.load(Ordering::SeqCst);
    assert!(pulled < 64 * 1024 * 1024, "the download stopped near the 8 MiB limit (served {pulled} bytes)");
    peer.text(&media_frame("len10g", "/huge-len")).await;
    c.wait(20, |e| matches!(e, Event::Error { code, id: Some(id), .. } if code == "too_big" && id == "len10g")).await;
    peer.text(&media_frame("loop", "/loop")).await;
    let ev = c.wait(20, |e| matches!(e, Event::Error { id: Some(id), .. } if id == "loop")).await;
    eprintln!("hostile: redirect loop → {ev:?}");
    alive(&mut c, &peer, next()).await;

    // hostile filenames: every file lands inside the media folder under a safe name
    let outside = format!("hermes-hostile-{}.sh", std::process::id());
    let names = [
        format!("../../../../../../tmp/{outside}"),
        "..".into(),
        "/etc/passwd".into(),
        r"C:\\Windows\\System32\\evil.dll".into(),
        "CON".into(),
        "nul.txt".into(),
        "COM1.tar.gz".into(),
        "a\\u0001b\\u001fc\\u0007.txt".into(),
        "\\u202Etxt.exe".into(),
        ".bashrc".into(),
        "x".repeat(5000),
    ];
    let mut saved = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let id = format!("name{i}");
        peer.text(&format!(r#"{{"t":"media","id":"{id}","kind":"document","mime":"text/plain","filename":"{name}","part":0,"parts":1,"final":true,"data":"aGk="}}"#)).await;
        let ev = c.wait(10, |e| matches!(e, Event::Media { id: x, .. } if *x == id)).await;
        let Event::Media { path, filename, .. } = ev else { unreachable!() };
        let p = PathBuf::from(&path);
        assert_eq!(p.parent(), Some(media.as_path()), "{name:?} saved as {path}");
        assert!(!filename.starts_with('.') && !filename.contains(['/', '\\']), "{filename:?}");
        assert!(!filename.chars().any(char::is_control), "{filename:?}");
        let stem = filename.split('.').next().unwrap_or("").to_ascii_uppercase();
        assert!(!["CON", "NUL", "COM1", "PRN", "AUX"].contains(&stem.as_str()), "{filename:?}");
        saved.push(p);
    }
    alive(&mut c, &peer, next()).await;

    // A-20: files that would run with one click, dressed as documents; names that hide what they are
    saved.extend(dressed_files(&mut c, &peer, &media).await);
    alive(&mut c, &peer, next()).await;

    // A-3, A-19: with 10^15 announced, 8 files × 2048 parts streamed interleaved cannot grow the buffer past our cap
    saved.extend(eight_by_2048_parts(&mut c, &peer).await);
    alive(&mut c, &peer, next()).await;

    let rss_end = peak_rss_kib();
    c.handle.shutdown().await;

    // nothing outside the media folder (the engine's data folder holds only media/ and outbox/)
    let mut all = Vec::new();
    walk(root.path(), &mut all);
    for f in &all {
        assert!(f.starts_with(&media), "a file outside the media folder: {}", f.display());
        assert!(!f.file_name().unwrap().to_string_lossy().starts_with(".partial-"), "a partial download left: {f:?}");
    }
    assert_eq!(all.len(), saved.len(), "only the saved files: {all:#?}");
    assert!(!Path::new("/tmp").join(&outside).exists(), "traversal escaped to /tmp");
    eprintln!(
        "hostile: peak RSS of the test process (engine + hostile peer, incl. the peer's own 17 MiB frame) {:.1} MiB \
         (at ready {:.1} MiB); 10 GB stream: {:.1} MiB pulled before the cut",
        rss_end as f64 / 1024.0,
        rss_start as f64 / 1024.0,
        pulled as f64 / 1048576.0
    );
    // generous: an unbounded buffer (the 10 GB stream, the endless reply, the million parts) would blow far past it
    assert!(rss_end < 512 * 1024, "peak RSS {rss_end} KiB");
}

fn base64_of(b: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// A Windows program's first bytes (`MZ`, then the DOS stub), and an ELF executable's.
const EXE: &[u8] = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00This program cannot be run in DOS mode.";
const ELF: &[u8] = b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x3e\x00";
const PDF: &[u8] = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n";

async fn media_file(
    c: &mut Client,
    peer: &Peer,
    id: &str,
    mime: &str,
    filename: &str,
    bytes: &[u8],
) -> (PathBuf, String) {
    let frame = serde_json::json!({"t":"media","id":id,"kind":"document","mime":mime,"filename":filename,
        "part":0,"parts":1,"final":true,"data":base64_of(bytes)});
    peer.text(&frame.to_string()).await;
    match c.wait(10, |e| matches!(e, Event::Media { id: x, .. } if x == id)).await {
        Event::Media { path, filename, .. } => (PathBuf::from(path), filename),
        _ => unreachable!(),
    }
}

/// Programs dressed as documents and names that hide their end (A-20): each is saved inside the media folder under
/// its real, full extension, judged by its bytes (never viewable, whatever the label), without an execute bit, with
/// nothing invisible or reserved left in its name; one name twice is two files. Returns the files saved.
async fn dressed_files(c: &mut Client, peer: &Peer, media: &Path) -> Vec<PathBuf> {
    use hermes_client::filetype;
    let mut saved = Vec::new();
    let mut check = |path: &Path, filename: &str| {
        assert_eq!(path.parent(), Some(media), "{filename:?} saved as {}", path.display());
        assert_eq!(path.file_name().unwrap().to_string_lossy(), filename);
        assert!(!hermes_client::names::is_reserved(filename), "{filename:?} is a reserved name");
        for ch in filename.chars() {
            let hidden = ch.is_control()
                || matches!(ch, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
                    | '\u{FEFF}' | '\u{061C}' | '\u{00AD}' | '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{3000}');
            assert!(!hidden, "{filename:?} keeps U+{:04X}", ch as u32);
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path).unwrap().permissions().mode();
            assert_eq!(mode & 0o111, 0, "{filename:?} is executable ({mode:o})");
        }
        saved.push(path.to_path_buf());
        filetype::of_file(path).unwrap()
    };

    // an executable labelled application/pdf, under a double extension: its full name, never viewable
    let (p, f) = media_file(c, peer, "dressed-1", "application/pdf", "Q3-report-final-for-review.pdf.exe", EXE).await;
    assert_eq!(f, "Q3-report-final-for-review.pdf.exe");
    let t = check(&p, &f);
    assert!(!t.viewable && t.name_ext == "exe", "{t:?}");
    // a program named as a PDF, labelled as one: the bytes say otherwise, not viewable
    let (p, f) = media_file(c, peer, "dressed-2", "application/pdf", "invoice.pdf", ELF).await;
    let t = check(&p, &f);
    assert!(!t.viewable && t.real_mime != "application/pdf", "{t:?}");
    // the right-to-left override that makes `…fdp.exe` read as `…exe.pdf`, zero-width, BOM, Arabic letter mark,
    // soft hyphen and odd spaces: all gone from the name, whose real extension stays `.exe`
    let hiding = "Q3\u{200B}report\u{FEFF}\u{061C}\u{00AD}\u{2066}final\u{00A0}\u{3000}\u{202E}fdp.exe";
    let (p, f) = media_file(c, peer, "dressed-3", "application/pdf", hiding, EXE).await;
    let t = check(&p, &f);
    assert!(f.ends_with(".exe") && !t.viewable, "{f:?} {t:?}");
    // a run of spaces pushing the real extension out of sight
    let spaces = format!("photo.jpg{}.exe", " ".repeat(120));
    let (p, f) = media_file(c, peer, "dressed-4", "image/jpeg", &spaces, EXE).await;
    let t = check(&p, &f);
    assert!(f.ends_with(".exe") && !t.viewable, "{f:?} {t:?}");
    // Windows device names in their superscript and console forms
    for (i, name) in ["COM¹.txt", "LPT¹", "CONIN$", "CONOUT$.log", "com³.tar.gz"].into_iter().enumerate() {
        let (p, f) = media_file(c, peer, &format!("reserved-{i}"), "text/plain", name, b"hi").await;
        check(&p, &f);
    }
    // the same name twice: two files, the first one untouched
    let (a, fa) = media_file(c, peer, "twice-1", "application/pdf", "same.pdf", PDF).await;
    let (b, fb) = media_file(c, peer, "twice-2", "application/pdf", "same.pdf", b"%PDF-1.7\nthe second one").await;
    assert_ne!(a, b);
    assert_eq!((fa.as_str(), fb.as_str()), ("same.pdf", "same (1).pdf"));
    assert_eq!(std::fs::read(&a).unwrap(), PDF, "the first file is untouched");
    assert!(check(&a, &fa).viewable, "a real PDF named .pdf is viewable (the control)");
    check(&b, &fb);
    saved
}

/// A-3, A-19 decision: the agent announced 10^15 bytes and streams 8 files × 2048 parts of 2 KiB (4 MiB each,
/// under our per-file limit; 32 MiB in all), interleaved. The session's own count of buffered bytes never passes our fixed cap (8 MiB here), the oldest
/// unfinished files are dropped with `media_buffer_full`, any finished one is saved whole, the connection stays.
async fn eight_by_2048_parts(c: &mut Client, peer: &Peer) -> Vec<PathBuf> {
    let cap = c.handle.media_buffer().cap;
    assert_eq!(cap, 8 * 1024 * 1024, "the buffer's cap comes from our limit, not the agent's 10^15");
    let conns = peer.connections.load(Ordering::SeqCst);
    let piece = base64_of(&vec![3u8; 2 * 1024]);
    let (files, parts) = (8u32, 2048u32);
    for p in 0..parts {
        peer.flood((0..files).map(|f| {
            format!(
                r#"{{"t":"media","id":"big{f}","kind":"document","filename":"big{f}.bin","part":{p},"parts":{parts},"final":{},"data":"{piece}"}}"#,
                p + 1 == parts
            )
        }))
        .await;
        let b = c.handle.media_buffer();
        assert!(b.held <= cap && b.peak <= cap, "{b:?}");
    }
    let (mut dropped, mut saved) = (Vec::new(), Vec::new());
    while dropped.len() + saved.len() < files as usize {
        match c
            .wait_forget(
                120,
                |e| matches!(e, Event::Media { id, .. } | Event::Error { id: Some(id), .. } if id.starts_with("big")),
            )
            .await
        {
            Event::Media { id, size, path, .. } => {
                assert_eq!(size, u64::from(parts) * 2 * 1024, "{id} saved whole");
                saved.push(PathBuf::from(path));
            }
            Event::Error { code, id: Some(id), .. } => {
                assert_eq!(code, "media_buffer_full", "{id}");
                dropped.push(id);
            }
            _ => unreachable!(),
        }
        let b = c.handle.media_buffer();
        assert!(b.held <= cap && b.peak <= cap, "{b:?}");
    }
    let b = c.handle.media_buffer();
    eprintln!(
        "hostile: 8 x 2048 parts under 10^15 announced: {} dropped, {} saved, buffer {b:?}",
        dropped.len(),
        saved.len()
    );
    assert!(b.peak <= cap && b.peak > cap / 2, "the stream filled the buffer but never passed it: {b:?}");
    assert!(!dropped.is_empty(), "32 MiB cannot fit an 8 MiB buffer: something was dropped");
    assert_eq!(peer.connections.load(Ordering::SeqCst), conns, "the connection stays");
    saved
}
