//! Soak: the engine with the real store (`StorePersist` on a SQLite file) ↔ the fault-injecting proxy ↔ the devserver,
//! many exchanges and file uploads across seeded random faults (drops mid-frame, mid-upload and mid-reply, latency,
//! bandwidth limits, half-open connections, server restarts). Then:
//! - the devserver's log (kept across its restarts) proves every message and file arrived exactly once per id, with
//!   the right content (A-6: resends keep their id and are dropped as repeats);
//! - the client's store shows every message delivered, every reply complete and correct, and no reply twice.
//!
//! Short variant in every `cargo test` (≈ 100 exchanges, 10 faults, 4 uploads). Long variant with `HERMES_SOAK=long`
//! (`cargo xtask soak`): 1,000 exchanges, 20 uploads (two of them 9 MiB in parts), ≥ 50 faults and one half-open
//! connection left for the heartbeat to find. `HERMES_SOAK_SEED=N` replays a run; the seed is printed.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hermes_client::{EngineConfig, Handle, Secret, StorePersist};
use hermes_devserver::faultproxy::{Direction as ProxyDir, Fault, FaultProxy, Rng};
use hermes_devserver::{Config as ServerConfig, LogHandle, LogItem, Running};
use hermes_protocol::{Command, Dialect, Event};
use hermes_store::{Assembly, Delivery, Direction, NewProfile, Store};
use sha2::Digest as _;

struct Plan {
    name: &'static str,
    exchanges: usize,
    uploads: usize,
    big_uploads: usize,
    faults: usize,
    /// Leave one connection half-open until the client's heartbeat notices (90 s, A-5).
    heartbeat_half_open: bool,
    timeout: Duration,
}

fn plan() -> Plan {
    if std::env::var("HERMES_SOAK").is_ok_and(|v| v == "long") {
        Plan {
            name: "long",
            exchanges: 1000,
            uploads: 20,
            big_uploads: 2,
            faults: 60,
            heartbeat_half_open: true,
            timeout: Duration::from_secs(1200),
        }
    } else {
        Plan {
            name: "short",
            exchanges: 100,
            uploads: 4,
            big_uploads: 0,
            faults: 10,
            heartbeat_half_open: false,
            timeout: Duration::from_secs(240),
        }
    }
}

async fn server(log: Option<LogHandle>) -> Running {
    hermes_devserver::start(ServerConfig { max_media_bytes: 16 * 1024 * 1024, log, ..ServerConfig::fast() })
        .await
        .expect("devserver starts")
}

#[derive(Default)]
struct Counts {
    faults: usize,
    drops: usize,
    /// cuts whose bytes never came in time, turned into drops
    cuts_as_drops: usize,
    cuts_up: usize,
    cuts_down: usize,
    mid_upload_cuts: usize,
    latency: usize,
    bandwidth: usize,
    half_open: usize,
    restarts: usize,
}

/// Apply one fault. Timed faults (latency, bandwidth, half-open) end by themselves: the caller heals the line
/// before the next one.
async fn inject(fault: Fault, proxy: &Arc<FaultProxy>, srv: &mut Running, rng: &mut Rng, counts: &mut Counts) {
    counts.faults += 1;
    proxy.heal();
    match fault {
        Fault::Drop => {
            counts.drops += 1;
            proxy.drop_all(rng.chance(50));
        }
        Fault::CutAfter(dir, n) => {
            match dir {
                ProxyDir::Up => counts.cuts_up += 1,
                ProxyDir::Down => counts.cuts_down += 1,
            }
            proxy.cut_after(dir, n);
        }
        Fault::Latency(d) => {
            counts.latency += 1;
            proxy.set_latency(d);
        }
        Fault::Bandwidth(bps) => {
            counts.bandwidth += 1;
            proxy.set_bandwidth(bps.max(256 * 1024));
        }
        Fault::HalfOpen(d) => {
            counts.half_open += 1;
            proxy.half_open();
            let p = proxy.clone();
            tokio::spawn(async move {
                tokio::time::sleep(d).await;
                p.drop_all(false);
            });
        }
        Fault::Restart => {
            counts.restarts += 1;
            proxy.set_refuse(true);
            let log = srv.log_handle();
            let old = std::mem::replace(srv, server(Some(log)).await);
            proxy.drop_all(rng.chance(50));
            old.shutdown().await;
            tokio::time::sleep(Duration::from_millis(rng.range(50, 400))).await;
            proxy.set_upstream(srv.addr());
            proxy.set_refuse(false);
        }
    }
}

/// Before the next fault: the last one must have done its work. A cut whose bytes never came becomes a drop; a
/// fault that ended the connection is over once the client is ready again.
#[allow(clippy::too_many_arguments)]
async fn settle(
    proxy: &FaultProxy,
    seen: &Mutex<Seen>,
    last: &mut Option<(Fault, usize, Instant)>,
    counts: &mut Counts,
    handle: &Handle,
    texts: &mut HashMap<String, String>,
    rng: &mut Rng,
    seed: u64,
) {
    let Some((fault, readies_before, at)) = last.take() else { return };
    if matches!(fault, Fault::CutAfter(..)) {
        // keep the line busy (more exchanges) until the cut has its bytes
        while proxy.cut_pending() && at.elapsed() < Duration::from_secs(2) {
            send_text(handle, texts, rng, seen, seed).await;
        }
        if proxy.cut_pending() {
            proxy.clear_cuts();
            proxy.drop_all(false);
            counts.cuts_as_drops += 1;
        }
    }
    if matches!(fault, Fault::Drop | Fault::CutAfter(..) | Fault::HalfOpen(_) | Fault::Restart) {
        let t = Instant::now();
        while seen.lock().unwrap().readies <= readies_before {
            assert!(t.elapsed() < Duration::from_secs(60), "seed {seed}: no reconnection after {fault:?}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// What the event drain saw: ready count, disconnects, the ids that got a final reply.
#[derive(Default)]
struct Seen {
    readies: usize,
    disconnects: usize,
    replied: HashSet<String>,
}

/// One exchange: a text, then its reply (or the connection drops first: the reply may come after the resend, or
/// be lost with the connection; the store check at the end tells).
async fn send_text(handle: &Handle, texts: &mut HashMap<String, String>, rng: &mut Rng, seen: &Mutex<Seen>, seed: u64) {
    let text = format!("soak message {} {}", texts.len(), rng.next_u64());
    let drops = seen.lock().unwrap().disconnects;
    let id = handle
        .command(Command::Text { text: text.clone(), reply_to: None, id: None, session: None, retry_of: None })
        .await
        .unwrap_or_else(|e| panic!("seed {seed}: text {text} refused: {e}"))
        .unwrap();
    texts.insert(id.clone(), text);
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(5) {
        {
            let s = seen.lock().unwrap();
            if s.replied.contains(&id) || s.disconnects > drops {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

fn open_store(dir: &Path, url: &str) -> (Arc<Mutex<Store>>, String, String, String) {
    let store = Store::open_in(dir).unwrap();
    let profile = store
        .profile_create(&NewProfile {
            name: "soak".into(),
            url: url.into(),
            dialect: hermes_store::Dialect::Adapter,
            v3_user_id: None,
            allow_insecure_ws: false,
            avatar_url: None,
        })
        .unwrap();
    let conv = store.conversation_for_adapter(&profile.id).unwrap();
    (Arc::new(Mutex::new(store)), profile.id, conv.id, profile.device_id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak_exchanges_and_uploads_across_faults_lose_nothing_and_duplicate_nothing() {
    let plan = plan();
    let seed: u64 = std::env::var("HERMES_SOAK_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed_0008);
    eprintln!("soak {}: seed {seed} (replay with HERMES_SOAK_SEED={seed})", plan.name);
    let started = Instant::now();
    let mut srv = server(None).await;
    let proxy = Arc::new(FaultProxy::start(srv.addr(), seed).await.unwrap());
    // one generator for the fault plan, another for message texts: how many texts a run sends depends on timing, the
    // plan (which faults, where, which files) depends on the seed only
    let mut rng = proxy.rng();
    let mut text_rng = Rng::new(seed ^ 0x7e57_7e57);
    let dir = tempfile::tempdir().unwrap();
    let url = format!("ws://{}/ws", proxy.addr());
    let (store, profile_id, conv_id, device_id) = open_store(dir.path(), &url);
    let persist = StorePersist::new(store.clone(), &profile_id, &conv_id, &dir.path().join("media"));
    let mut cfg =
        EngineConfig::new(&url, Dialect::Adapter, Secret::new(hermes_devserver::DEV_TOKEN), &device_id, dir.path());
    cfg.connect_timeout = Duration::from_secs(3);
    cfg.seed = seed;
    let (handle, mut events) = hermes_client::spawn(cfg, Box::new(persist)).unwrap();

    // Events are drained all the time (the engine waits when its channel is full).
    let seen = Arc::new(Mutex::new(Seen::default()));
    let errors = Arc::new(Mutex::new(Vec::<Event>::new()));
    let (r2, e2) = (seen.clone(), errors.clone());
    let drain = tokio::spawn(async move {
        while let Some(ev) = events.recv().await {
            match &ev {
                Event::Ready { .. } => r2.lock().unwrap().readies += 1,
                Event::Disconnected { .. } => r2.lock().unwrap().disconnects += 1,
                Event::Message { final_: true, reply_to: Some(to), .. } => {
                    r2.lock().unwrap().replied.insert(to.clone());
                }
                Event::Rejected { .. } | Event::AccessDenied { .. } => e2.lock().unwrap().push(ev),
                _ => {}
            }
        }
    });
    let wait_ready = |n: usize| {
        let seen = seen.clone();
        async move {
            while seen.lock().unwrap().readies < n {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(15), wait_ready(1)).await.expect("first ready");

    // The work: texts, with the uploads spread among them; faults at seeded points in between.
    let files_dir = dir.path().join("to-send");
    std::fs::create_dir_all(&files_dir).unwrap();
    let mut upload_at: Vec<usize> = (0..plan.uploads).map(|i| (i * plan.exchanges) / plan.uploads + 1).collect();
    upload_at.dedup();
    let mut fault_at: HashSet<usize> = HashSet::new();
    while fault_at.len() < plan.faults.min(plan.exchanges) {
        fault_at.insert(rng.range(1, plan.exchanges as u64) as usize);
    }
    let mut texts: HashMap<String, String> = HashMap::new();
    let mut files: HashMap<String, (String, u64, String)> = HashMap::new(); // id → (filename, size, sha256)
    let mut counts = Counts::default();
    if plan.heartbeat_half_open {
        // a connection that stops answering without closing is found by the heartbeat, then reconnected.
        counts.faults += 1;
        counts.half_open += 1;
        proxy.half_open();
        let before = seen.lock().unwrap().readies;
        let id = handle
            .command(Command::Text {
                text: "into the void".into(),
                reply_to: None,
                id: None,
                session: None,
                retry_of: None,
            })
            .await
            .unwrap()
            .unwrap();
        texts.insert(id, "into the void".into());
        tokio::time::timeout(Duration::from_secs(150), wait_ready(before + 1))
            .await
            .expect("the heartbeat finds the half-open connection and the client reconnects");
        eprintln!("soak: half-open connection detected and replaced after {:.0} s", started.elapsed().as_secs_f64());
    }
    // every kind of fault at least once (random parameters), the rest drawn at random; in a seeded order
    let mut planned: Vec<Fault> = vec![
        Fault::Restart,
        Fault::HalfOpen(Duration::from_millis(rng.range(200, 1500))),
        Fault::CutAfter(ProxyDir::Up, rng.range(1, 1500)),
        Fault::CutAfter(ProxyDir::Down, rng.range(1, 1500)),
        Fault::Drop,
        Fault::Latency(Duration::from_millis(rng.range(20, 150))),
        Fault::Bandwidth(rng.range(256 * 1024, 1024 * 1024)),
    ];
    while planned.len() < fault_at.len() {
        planned.push(Fault::random(&mut rng, true));
    }
    for i in (1..planned.len()).rev() {
        planned.swap(i, rng.range(0, i as u64 + 1) as usize);
    }
    let mut uploads_done = 0;
    let mut last: Option<(Fault, usize, Instant)> = None;
    for i in 0..plan.exchanges {
        if upload_at.first() == Some(&i) {
            upload_at.remove(0);
            let big = uploads_done < plan.big_uploads;
            let size = if big { 9 * 1024 * 1024 + rng.range(0, 4096) } else { rng.range(1, 600 * 1024) };
            let bytes: Vec<u8> = {
                let mut r = Rng::new(rng.next_u64());
                (0..size).map(|_| r.next_u64() as u8).collect()
            };
            let name = format!("upload-{uploads_done}.bin");
            let path = files_dir.join(&name);
            std::fs::write(&path, &bytes).unwrap();
            if rng.chance(50) {
                // mid-upload: armed before the file is queued, the cut lands inside its frames (base64 is larger
                // than the file)
                settle(&proxy, &seen, &mut last, &mut counts, &handle, &mut texts, &mut text_rng, seed).await;
                counts.mid_upload_cuts += 1;
                let f = Fault::CutAfter(ProxyDir::Up, rng.range(64, size.max(65)));
                last = Some((f.clone(), seen.lock().unwrap().readies, Instant::now()));
                inject(f, &proxy, &mut srv, &mut rng, &mut counts).await;
            }
            let id = handle
                .command(Command::File {
                    path: path.to_string_lossy().into(),
                    caption: Some(format!("file {uploads_done}")),
                    id: None,
                    session: None,
                    retry_of: None,
                })
                .await
                .unwrap()
                .unwrap();
            files.insert(id, (name, size, hex::encode(sha2::Sha256::digest(&bytes))));
            uploads_done += 1;
        }
        if fault_at.contains(&i) {
            settle(&proxy, &seen, &mut last, &mut counts, &handle, &mut texts, &mut text_rng, seed).await;
            let mut f = planned.pop().unwrap_or_else(|| Fault::random(&mut rng, true));
            if let Fault::CutAfter(_, n) = &mut f {
                *n = 1 + *n % 1500; // texts and replies are small: make the cut land while they flow
            }
            last = Some((f.clone(), seen.lock().unwrap().readies, Instant::now()));
            inject(f, &proxy, &mut srv, &mut rng, &mut counts).await;
        }
        send_text(&handle, &mut texts, &mut text_rng, &seen, seed).await;
        tokio::time::sleep(Duration::from_millis(rng.range(0, 12))).await;
    }
    settle(&proxy, &seen, &mut last, &mut counts, &handle, &mut texts, &mut text_rng, seed).await;
    proxy.heal();

    // Everything must arrive: wait until the store has every message delivered.
    let all_ids: Vec<String> = texts.keys().chain(files.keys()).cloned().collect();
    let deadline = started + plan.timeout;
    loop {
        let pending = {
            let s = store.lock().unwrap();
            all_ids
                .iter()
                .filter(|id| s.message_get(id).unwrap().and_then(|m| m.delivery) != Some(Delivery::Delivered))
                .count()
        };
        if pending == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "seed {seed}: {pending} messages still not delivered after {:?}",
            plan.timeout
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Let the last replies come in.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let log = srv.log();
    handle.shutdown().await;
    drain.abort();
    let elapsed = started.elapsed();

    // --- the devserver's log: every id exactly once, with the right content
    let mut seen_ids: HashMap<&str, usize> = HashMap::new();
    for e in &log {
        *seen_ids.entry(e.id.as_str()).or_default() += 1;
    }
    let duplicates_server = seen_ids.values().filter(|n| **n > 1).count()
        + log.iter().filter(|e| !texts.contains_key(&e.id) && !files.contains_key(&e.id)).count();
    let mut losses = 0;
    for (id, text) in &texts {
        match log.iter().find(|e| e.id == *id).map(|e| &e.item) {
            Some(LogItem::Text { text: t, .. }) => assert_eq!(t, text, "seed {seed}: text {id} arrived changed"),
            Some(other) => panic!("seed {seed}: {id} logged as {other:?}"),
            None => losses += 1,
        }
    }
    for (id, (name, size, sha)) in &files {
        match log.iter().find(|e| e.id == *id).map(|e| &e.item) {
            Some(LogItem::Media { filename, size: s, sha256, .. }) => {
                assert_eq!((filename, s, sha256), (name, size, sha), "seed {seed}: file {id} arrived changed")
            }
            Some(other) => panic!("seed {seed}: {id} logged as {other:?}"),
            None => losses += 1,
        }
    }
    let resends_dropped: u32 = log.iter().map(|e| e.repeats).sum();

    // --- the client's store: every message delivered once, every reply complete, none twice
    let s = store.lock().unwrap();
    let page = s.page(&conv_id, None, s.count(&conv_id).unwrap() as u32 + 1).unwrap();
    let outgoing: Vec<_> = page.messages.iter().filter(|m| m.direction == Direction::Up).collect();
    let incoming: Vec<_> = page.messages.iter().filter(|m| m.direction == Direction::Down).collect();
    assert_eq!(outgoing.len(), all_ids.len(), "seed {seed}: one local row per sent message");
    assert!(s.outbox_pending(&profile_id).unwrap().is_empty(), "seed {seed}: the outbox is empty");
    let mut server_ids = HashSet::new();
    let mut replies_to: HashMap<String, usize> = HashMap::new();
    let mut echo_replies = 0;
    let mut file_replies = 0;
    for m in &incoming {
        assert_eq!(m.assembly, Assembly::Final, "seed {seed}: reply {:?} is not complete", m.text);
        assert!(server_ids.insert(m.server_id.clone()), "seed {seed}: reply {:?} stored twice", m.server_id);
        if let Some(to) = &m.reply_to {
            *replies_to.entry(to.clone()).or_default() += 1;
            let text = texts.get(to).unwrap_or_else(|| panic!("seed {seed}: a reply to an unknown message {to}"));
            assert_eq!(m.text, format!("You said: {text}"), "seed {seed}: reply to {to} is wrong or partial");
            echo_replies += 1;
        } else if m.text.starts_with("Got upload-") {
            file_replies += 1;
        }
    }
    let duplicates_store = replies_to.values().filter(|n| **n > 1).count();
    let integrity = s.integrity_check().unwrap();
    drop(s);
    let stats = proxy.stats();
    eprintln!(
        "soak {} (seed {seed}): {} exchanges + {} uploads ({} big, in parts) in {:.1} s; faults {} \
         (drops {}, up-cuts {}, down-cuts {} ({} of the cuts became drops), mid-upload cuts {}, latency {}, bandwidth {}, half-open {}, restarts {}); \
         proxy: {} connections, {} cut, {} refused, {:.1} MB up, {:.1} MB down; \
         losses {losses}, duplicates {} (server) + {duplicates_store} (store), resends dropped by the agent {resends_dropped}; \
         replies stored {echo_replies}/{} texts + {file_replies}/{} files (the rest were in flight on a cut connection: \
         the adapter has no downlink resend)",
        plan.name,
        texts.len(),
        files.len(),
        plan.big_uploads,
        elapsed.as_secs_f64(),
        counts.faults,
        counts.drops,
        counts.cuts_up,
        counts.cuts_down,
        counts.cuts_as_drops,
        counts.mid_upload_cuts,
        counts.latency,
        counts.bandwidth,
        counts.half_open,
        counts.restarts,
        stats.connections,
        stats.cuts,
        stats.refused,
        stats.bytes_up as f64 / 1e6,
        stats.bytes_down as f64 / 1e6,
        duplicates_server,
        texts.len(),
        files.len(),
    );
    assert_eq!(losses, 0, "seed {seed}: messages or files lost");
    assert_eq!(duplicates_server, 0, "seed {seed}: an id arrived twice, or an unknown one arrived");
    assert_eq!(duplicates_store, 0, "seed {seed}: a message got two replies in the store");
    assert!(integrity.is_empty(), "seed {seed}: database integrity: {integrity:?}");
    assert!(counts.faults >= plan.faults, "seed {seed}: only {} faults injected", counts.faults);
    assert!(stats.connections as usize > plan.faults / 2, "seed {seed}: the faults really cut connections");
    assert!(echo_replies > texts.len() / 2, "seed {seed}: most replies arrive ({echo_replies}/{})", texts.len());
    let errs = errors.lock().unwrap();
    assert!(errs.is_empty(), "seed {seed}: nothing refused: {errs:?}");
}
