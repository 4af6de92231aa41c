//! Crash safety: a child process (this test binary re-executed) writes messages + outbox rows
//! in transactions; the parent SIGKILLs it mid-work (several rounds, at different moments, also
//! across WAL auto-checkpoints), then reopens the database and checks:
//! integrity ok, every transaction the child reported committed is present, and every
//! transaction is all-or-nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use hermes_store::*;
use rand::Rng;

const ENV_DB: &str = "HERMES_STORE_CRASH_CHILD_DB";
const ENV_ROUND: &str = "HERMES_STORE_CRASH_CHILD_ROUND";
/// Messages (and outbox rows) per transaction.
const BATCH: usize = 4;

fn open_fixture(path: &Path) -> (Store, Profile, Conversation) {
    let s = Store::open(path).expect("open");
    let p = match s.profiles().expect("profiles").into_iter().next() {
        Some(p) => p,
        None => s
            .profile_create(&NewProfile {
                name: "crash".into(),
                url: "ws://127.0.0.1:1".into(),
                dialect: Dialect::Adapter,
                v3_user_id: None,
                allow_insecure_ws: true,
                avatar_url: None,
            })
            .expect("profile"),
    };
    let c = s.conversation_for_adapter(&p.id).expect("conversation");
    (s, p, c)
}

/// Child mode: only does something when re-executed by the parent with the env vars set.
#[test]
fn crash_child() {
    let (Ok(db), Ok(round)) = (std::env::var(ENV_DB), std::env::var(ENV_ROUND)) else {
        return;
    };
    let (s, p, c) = open_fixture(Path::new(&db));
    let filler = "lorem ipsum dolor sit amet ".repeat(80); // ~2 KiB per message
    let stream_id = format!("r{round}-stream");
    let started = Instant::now();
    let mut out = std::io::stdout();
    // Bounded so that an orphaned child cannot run forever.
    for n in 0..200_000u32 {
        if started.elapsed() > Duration::from_secs(60) {
            break;
        }
        s.atomically(|s| {
            for j in 0..BATCH {
                let mut m = Message::new(&c.id, Direction::Up, &filler, i64::from(n));
                m.id = format!("r{round}-b{n}-m{j}");
                m.text = format!("{} {filler}", m.id);
                s.message_upsert(&m)?;
                s.outbox_insert(&NewOutboxEntry {
                    id: m.id.clone(),
                    profile_id: p.id.clone(),
                    conversation_id: c.id.clone(),
                    kind: OutboxKind::Text,
                    payload: serde_json::json!({ "text": m.id, "n": n }),
                })?;
            }
            // A streamed message edited in the same transaction: its edit_count must always
            // equal the newest batch present.
            let mut st = Message::new(&c.id, Direction::Down, &format!("stream v{n}"), 0);
            st.id = stream_id.clone();
            st.assembly = Assembly::Streaming;
            st.edit_count = n;
            s.message_upsert(&st)
        })
        .expect("child transaction");
        // Reported only after COMMIT returned.
        let _ = writeln!(out, "committed {round} {n}");
        let _ = out.flush();
    }
}

#[test]
fn kill9_mid_write_loses_nothing() {
    let tmp = tempfile::tempdir().expect("tmp");
    let db = tmp.path().join("hermes.sqlite3");
    let exe = std::env::current_exe().expect("current exe");
    let mut rng = rand::rng();
    let mut committed: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    // Kill after different amounts of work: early, mid-way, and after at least one WAL
    // auto-checkpoint (every 4000 pages; a batch dirties ~10 pages).
    let targets = [5u32, 150, 1500];
    for (round, &target) in targets.iter().enumerate() {
        let round = round as u32;
        let size_before = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
        let mut child = Command::new(&exe)
            .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
            .env(ENV_DB, &db)
            .env(ENV_ROUND, round.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn child");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel::<u32>();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let mut parts = line.split_whitespace();
                if parts.next() == Some("committed") {
                    let _round = parts.next();
                    if let Some(n) = parts.next().and_then(|n| n.parse().ok()) {
                        let _ = tx.send(n);
                    }
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(90);
        let mut seen = 0u32;
        while seen < target {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(_) => seen += 1,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    assert!(Instant::now() < deadline, "child too slow (round {round})");
                    if let Ok(Some(status)) = child.try_wait() {
                        panic!("child exited early: {status}");
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => panic!("child closed stdout"),
            }
        }
        // Land the kill at a random point inside the next transactions.
        std::thread::sleep(Duration::from_micros(rng.random_range(0..3000)));
        child.kill().expect("SIGKILL");
        let status = child.wait().expect("wait");
        assert!(!status.success(), "child must have been killed");
        reader.join().expect("reader");
        // Every line written before the kill is still in the pipe.
        let printed: BTreeSet<u32> = rx.try_iter().chain(0..seen).collect();
        committed.insert(round, printed);
        if round as usize == targets.len() - 1 {
            // The main file only grows through checkpoints: one ran in the killed child.
            let size_after = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
            assert!(size_after > size_before, "no checkpoint during the last round");
        }

        verify(&db, &committed);
    }
}

fn verify(db: &Path, committed: &BTreeMap<u32, BTreeSet<u32>>) {
    let (s, p, c) = open_fixture(db);
    assert!(s.integrity_check().expect("integrity").is_empty(), "integrity check failed");

    // Group present messages by (round, batch).
    let mut batches: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    let mut stream_edits: BTreeMap<u32, u32> = BTreeMap::new();
    let mut before = None;
    loop {
        let page = s.page(&c.id, before, 500).expect("page");
        for m in &page.messages {
            if let Some(round) = m.id.strip_suffix("-stream").and_then(|r| r.strip_prefix('r')) {
                stream_edits.insert(round.parse().expect("round"), m.edit_count);
                continue;
            }
            let (round, n) = parse_id(&m.id);
            *batches.entry((round, n)).or_default() += 1;
            assert!(m.text.starts_with(&m.id), "message text intact");
        }
        match page.next {
            Some(cur) => before = Some(cur),
            None => break,
        }
    }
    let outbox = s.outbox_pending(&p.id).expect("outbox");
    let mut outbox_batches: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    for e in &outbox {
        *outbox_batches.entry(parse_id(&e.id)).or_default() += 1;
        assert!(s.message_get(&e.id).expect("get").is_some(), "outbox row without message");
    }
    // Outbox order is insertion order.
    let order: Vec<(u32, u32)> = outbox.iter().map(|e| parse_id(&e.id)).collect();
    assert!(order.windows(2).all(|w| w[0] <= w[1]), "outbox out of order");

    for (&(round, n), &count) in &batches {
        assert_eq!(count, BATCH, "half-written transaction r{round} b{n}");
        assert_eq!(outbox_batches.get(&(round, n)), Some(&BATCH), "outbox r{round} b{n}");
    }
    assert_eq!(batches.len(), outbox_batches.len());
    for (&round, ns) in committed {
        for &n in ns {
            assert!(batches.contains_key(&(round, n)), "lost committed r{round} b{n}");
        }
        // Present batches are exactly 0..=max (no holes), and the streamed message matches.
        let present: Vec<u32> = batches.keys().filter(|(r, _)| *r == round).map(|&(_, n)| n).collect();
        let max = *present.last().expect("some batches");
        assert_eq!(present.len() as u32, max + 1, "holes in round {round}");
        assert_eq!(stream_edits.get(&round), Some(&max), "stream edit out of sync in r{round}");
    }
    assert_eq!(s.count(&c.id).expect("count") as usize, batches.len() * BATCH + stream_edits.len());
}

fn parse_id(id: &str) -> (u32, u32) {
    // r{round}-b{n}-m{j}
    let mut it = id.split('-');
    let round = it.next().and_then(|r| r.strip_prefix('r')).and_then(|r| r.parse().ok());
    let n = it.next().and_then(|b| b.strip_prefix('b')).and_then(|b| b.parse().ok());
    match (round, n) {
        (Some(r), Some(n)) => (r, n),
        _ => panic!("unexpected id {id}"),
    }
}
