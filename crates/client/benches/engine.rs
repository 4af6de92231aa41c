//! Engine benchmarks (a bench binary: throughput, CPU and memory are not criterion's business).
//!
//! 1. Receive throughput of small `message` frames on loopback: the engine (decode, assemble, event) against a
//!    bare tokio-tungstenite read loop in the same run (goal ≥ 0.5×).
//! 2. Sending an 8 MiB file end to end (copy to the outbox, encode, write, confirm) to the reference agent running
//!    as a separate process: CPU time of this process (goal ≤ 30 ms) and peak extra memory (goal ≤ 3× the file).
//!
//! `cargo bench -p hermes-client --bench engine`; under `cargo test` it runs a tiny version as a smoke test.

use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use hermes_client::{EngineConfig, MemoryPersist, Secret};
use hermes_protocol::{Command, Dialect, Event};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let n = if full { 200_000 } else { 2_000 };
    // The machine is shared and noisy: several rounds, each measuring the three loops back to back, and the ratios
    // taken within a round (the same load for the three), reported as median and range.
    let rounds = if full { 5 } else { 1 };
    let mut ratios = Vec::new();
    for _ in 0..rounds {
        ratios.push(rt.block_on(receive_throughput(n, full)));
    }
    if full {
        ratios.sort_by(f64::total_cmp);
        println!(
            "receive: engine/bare over {rounds} rounds: median {:.2}, range {:.2}–{:.2}",
            ratios[ratios.len() / 2],
            ratios[0],
            ratios[ratios.len() - 1]
        );
    }
    if full {
        rt.block_on(send_8mib());
    }
}

/// A minimal adapter peer: answers hello with ready, then sends `n` final messages as fast as it can.
///
/// It runs on its own thread with its own single-threaded runtime, so the peer never shares a worker with the loop
/// being measured: the bare loops and the engine are all tasks on the main runtime, and each faces the same peer.
fn blaster(n: usize) -> std::net::SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    l.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            let l = TcpListener::from_std(l).unwrap();
            // one connection per measured loop (three), then the thread ends
            for _ in 0..3 {
                let Ok((s, _)) = l.accept().await else { return };
                let Ok(mut ws) = tokio_tungstenite::accept_async(s).await else { continue };
                let _hello = ws.next().await;
                ws.send(Message::text(r#"{"t":"ready","session":"mobile:b","capabilities":{}}"#)).await.unwrap();
                for i in 0..n {
                    let f = format!(
                        r#"{{"t":"message","id":"m{i}","text":"hello number {i}, a short reply","final":true}}"#
                    );
                    if ws.feed(Message::text(f)).await.is_err() {
                        break;
                    }
                }
                let _ = ws.flush().await;
                // until the reader hangs up
                while let Some(Ok(_)) = ws.next().await {}
            }
        });
    });
    addr
}

/// A bare tokio-tungstenite read loop as a task on the runtime (like the engine): connect, say hello, read the
/// `ready` and `n` messages — decoding each with the protocol crate when `decode`. Returns its time.
async fn read_loop(addr: std::net::SocketAddr, n: usize, decode: bool) -> Duration {
    tokio::spawn(async move {
        let t = Instant::now();
        let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws")).await.unwrap();
        ws.send(Message::text("{}")).await.unwrap();
        let mut got = 0;
        while let Some(Ok(m)) = ws.next().await {
            if let Message::Text(text) = m {
                if decode {
                    let _ = std::hint::black_box(hermes_protocol::adapter::decode_down(text.as_str()));
                }
                got += 1;
                if got == n + 1 {
                    break;
                }
            }
        }
        t.elapsed()
    })
    .await
    .unwrap()
}

/// One round; returns engine/bare.
async fn receive_throughput(n: usize, print: bool) -> f64 {
    let addr = blaster(n);
    // bare read loop, a task like the engine
    let bare = read_loop(addr, n, false).await;
    // the same loop that also decodes each frame (the protocol crate's decoder): where the engine's time goes
    let decoding = read_loop(addr, n, true).await;
    // the engine
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = EngineConfig::new(format!("ws://{addr}/ws"), Dialect::Adapter, Secret::new("t"), "bench", dir.path());
    cfg.seed = 1;
    let t = Instant::now();
    let (handle, mut events) = hermes_client::spawn(cfg, Box::new(MemoryPersist::default())).unwrap();
    let mut finals = 0;
    while let Some(ev) = events.recv().await {
        if let Event::Message { final_: true, .. } = ev {
            finals += 1;
            if finals == n {
                break;
            }
        }
    }
    let engine = t.elapsed();
    handle.shutdown().await;
    assert_eq!(finals, n);
    let rate = |d: Duration| n as f64 / d.as_secs_f64();
    if print {
        println!(
            "receive {n} small message frames: bare tokio-tungstenite {:.0} msg/s, bare + decode {:.0} msg/s, engine {:.0} msg/s; ratio engine/bare {:.2}, engine/(bare + decode) {:.2}",
            rate(bare),
            rate(decoding),
            rate(engine),
            rate(engine) / rate(bare),
            rate(engine) / rate(decoding)
        );
    }
    rate(engine) / rate(bare)
}

fn cpu_time() -> Duration {
    // SAFETY: getrusage writes into the struct we own; RUSAGE_SELF is always valid.
    #[allow(unsafe_code)]
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let tv = |t: libc::timeval| Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn status_kb(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

async fn send_8mib() {
    let bin = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/release/hermes-devserver");
    let target = std::env::var("CARGO_TARGET_DIR").map(std::path::PathBuf::from).ok();
    let bin = target.map(|t| t.join("release/hermes-devserver")).filter(|p| p.exists()).unwrap_or(bin);
    if !bin.exists() {
        println!("send 8 MiB: skipped — build the agent first: cargo build --release -p hermes-devserver");
        return;
    }
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut server = std::process::Command::new(&bin)
        .args([
            "--bind",
            &format!("127.0.0.1:{port}"),
            "--token",
            "benchtoken",
            "--no-demo",
            "--max-media-bytes",
            "16777216",
        ])
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("eight.bin");
    let bytes: Vec<u8> = (0..8 * 1024 * 1024u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    std::fs::write(&file, &bytes).unwrap();
    drop(bytes);
    let cfg = EngineConfig::new(
        format!("ws://127.0.0.1:{port}/ws"),
        Dialect::Adapter,
        Secret::new("benchtoken"),
        "bench-8",
        dir.path(),
    );
    let (handle, mut events) = hermes_client::spawn(cfg, Box::new(MemoryPersist::default())).unwrap();
    while let Some(ev) = events.recv().await {
        if matches!(ev, Event::Ready { .. }) {
            break;
        }
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let _ = std::fs::write("/proc/self/clear_refs", "5"); // reset the peak RSS
    let base_kb = status_kb("VmRSS:");
    let cpu0 = cpu_time();
    let t = Instant::now();
    let id = handle
        .command(Command::File {
            path: file.to_string_lossy().into(),
            caption: None,
            id: None,
            session: None,
            retry_of: None,
        })
        .await
        .unwrap()
        .unwrap();
    while let Some(ev) = events.recv().await {
        if matches!(&ev, Event::Delivered { id: d } if *d == id) {
            break;
        }
    }
    let wall = t.elapsed();
    let cpu = cpu_time() - cpu0;
    let peak_kb = status_kb("VmHWM:");
    handle.shutdown().await;
    let _ = server.kill();
    let _ = server.wait();
    let extra_mib = peak_kb.saturating_sub(base_kb) as f64 / 1024.0;
    println!(
        "send an 8 MiB file end to end: wall {:.1} ms, CPU of this process {:.1} ms, peak extra RSS {:.1} MiB ({:.2}× the file)",
        wall.as_secs_f64() * 1e3,
        cpu.as_secs_f64() * 1e3,
        extra_mib,
        extra_mib / 8.0
    );
}
