//! A fault-injecting TCP proxy on loopback, for reliability tests: it sits between a client and the devserver and
//! can cut connections abruptly (at once, or after a given number of bytes, i.e. in the middle of a frame, an
//! upload or a streamed reply), add latency, limit bandwidth, go half-open (stop forwarding without closing), and
//! refuse new connections (e.g. while the server restarts).
//!
//! Every random choice comes from one seed ([`FaultProxy::rng`], [`Fault::random`]) so a failing run can be replayed
//! exactly: tests print the seed when they fail.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use hermes_devserver::faultproxy::{Direction, FaultProxy};
//! let server = hermes_devserver::start(hermes_devserver::Config::fast()).await.unwrap();
//! let proxy = FaultProxy::start(server.addr(), 42).await?;
//! let url = format!("ws://{}/ws", proxy.addr()); // the client dials the proxy
//! proxy.cut_after(Direction::Up, 1000); // the connection dies after 1000 more bytes towards the server
//! # Ok(()) }
//! ```

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::lock;

/// Which way the bytes go: `Up` client → server, `Down` server → client.
pub use hermes_protocol::Direction;

/// A deterministic pseudo-random generator (SplitMix64): the same seed gives the same faults on every machine.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..hi` (`lo` when the range is empty).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo { lo } else { lo + self.next_u64() % (hi - lo) }
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.range(0, 100) < percent
    }
}

/// One fault, as a soak test schedules them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Cut every live connection now (FIN or RST, chosen by the seed).
    Drop,
    /// Cut the connection after this many more bytes in this direction (mid-frame / mid-upload / mid-stream).
    CutAfter(Direction, u64),
    /// Add this latency to every forwarded chunk for a while.
    Latency(Duration),
    /// Limit forwarding to this many bytes per second for a while.
    Bandwidth(u64),
    /// Stop forwarding without closing, for this long; then the dead connection is cut (what the client's heartbeat
    /// would eventually do).
    HalfOpen(Duration),
    /// The server goes away and comes back (the test restarts the devserver; the proxy refuses meanwhile).
    Restart,
}

impl Fault {
    /// A fault chosen by `rng`: mostly cuts at random byte offsets, sometimes latency, bandwidth, half-open,
    /// restarts (when `restarts` is true).
    pub fn random(rng: &mut Rng, restarts: bool) -> Fault {
        match rng.range(0, 100) {
            0..=24 => Fault::Drop,
            25..=44 => Fault::CutAfter(Direction::Up, rng.range(1, 64 * 1024)),
            45..=64 => Fault::CutAfter(Direction::Down, rng.range(1, 4 * 1024)),
            65..=72 => Fault::Latency(Duration::from_millis(rng.range(20, 150))),
            73..=80 => Fault::Bandwidth(rng.range(64 * 1024, 1024 * 1024)),
            81..=90 => Fault::HalfOpen(Duration::from_millis(rng.range(200, 1500))),
            _ if restarts => Fault::Restart,
            _ => Fault::Drop,
        }
    }
}

/// What happened so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    pub connections: u64,
    pub refused: u64,
    /// Connections ended by the proxy (drops, cuts, half-open ends).
    pub cuts: u64,
    pub bytes_up: u64,
    pub bytes_down: u64,
}

#[derive(Debug, Default)]
struct Settings {
    latency: Duration,
    /// Bytes per second; 0 = unlimited.
    bandwidth: u64,
    /// Remaining bytes before a cut, per direction.
    cut_after: HashMap<Direction, u64>,
}

#[derive(Debug)]
struct State {
    upstream: Mutex<SocketAddr>,
    settings: Mutex<Settings>,
    refuse: AtomicBool,
    rng: Mutex<Rng>,
    /// Connection id → its kill switch (and whether it is a black hole).
    conns: Mutex<HashMap<u64, Conn>>,
    next: AtomicU64,
    stats: Mutex<Stats>,
}

#[derive(Debug)]
struct Conn {
    kill: watch::Sender<Option<bool>>,
    black_hole: Arc<AtomicBool>,
}

/// A running proxy. Dropping it stops accepting and cuts every connection.
#[derive(Debug)]
pub struct FaultProxy {
    addr: SocketAddr,
    state: Arc<State>,
    task: JoinHandle<()>,
}

impl FaultProxy {
    /// Listen on a free loopback port and forward to `upstream`. `seed` drives every random choice of the proxy.
    pub async fn start(upstream: SocketAddr, seed: u64) -> std::io::Result<FaultProxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State {
            upstream: Mutex::new(upstream),
            settings: Mutex::new(Settings::default()),
            refuse: AtomicBool::new(false),
            rng: Mutex::new(Rng::new(seed)),
            conns: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            stats: Mutex::new(Stats::default()),
        });
        let st = state.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else { continue };
                if st.refuse.load(Ordering::SeqCst) {
                    lock(&st.stats).refused += 1;
                    let _ = client.set_zero_linger();
                    drop(client);
                    continue;
                }
                tokio::spawn(serve(st.clone(), client));
            }
        });
        Ok(FaultProxy { addr, state, task })
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Forward new connections to another address (a restarted server on another port).
    pub fn set_upstream(&self, upstream: SocketAddr) {
        *lock(&self.state.upstream) = upstream;
    }

    /// Draw from the proxy's seeded generator (tests use it for their own random choices, so one seed replays all).
    pub fn rng(&self) -> Rng {
        let mut g = lock(&self.state.rng);
        Rng::new(g.next_u64())
    }

    pub fn stats(&self) -> Stats {
        *lock(&self.state.stats)
    }

    /// Live connections.
    pub fn connections(&self) -> usize {
        lock(&self.state.conns).len()
    }

    /// Added delay for every forwarded chunk (both directions).
    pub fn set_latency(&self, latency: Duration) {
        lock(&self.state.settings).latency = latency;
    }

    /// Forward at most `bytes_per_sec` (per direction and connection); 0 = unlimited.
    pub fn set_bandwidth(&self, bytes_per_sec: u64) {
        lock(&self.state.settings).bandwidth = bytes_per_sec;
    }

    /// Refuse new connections (accept and reset them at once), e.g. while the server is down.
    pub fn set_refuse(&self, refuse: bool) {
        self.state.refuse.store(refuse, Ordering::SeqCst);
    }

    /// Cut the connection that forwards the next `bytes` bytes in `dir`, right after them: in the middle of whatever
    /// frame is on the wire then.
    pub fn cut_after(&self, dir: Direction, bytes: u64) {
        lock(&self.state.settings).cut_after.insert(dir, bytes);
    }

    /// Is a `cut_after` still waiting for its bytes?
    pub fn cut_pending(&self) -> bool {
        !lock(&self.state.settings).cut_after.is_empty()
    }

    /// Forget a pending `cut_after`.
    pub fn clear_cuts(&self) {
        lock(&self.state.settings).cut_after.clear();
    }

    /// Cut every live connection now: with a reset when `reset`, else with a FIN (no WebSocket close either way).
    pub fn drop_all(&self, reset: bool) {
        let conns: Vec<_> = lock(&self.state.conns).drain().collect();
        let n = conns.len() as u64;
        for (_, c) in conns {
            let _ = c.kill.send(Some(reset));
        }
        lock(&self.state.stats).cuts += n;
    }

    /// Half-open: every live connection stops forwarding (bytes are read and thrown away, as if the peer vanished)
    /// but stays open. New connections work normally. [`FaultProxy::drop_all`] ends them.
    pub fn half_open(&self) {
        for c in lock(&self.state.conns).values() {
            c.black_hole.store(true, Ordering::SeqCst);
        }
    }

    /// Back to a clean line: no latency, no bandwidth limit, no pending cut, accepting.
    pub fn heal(&self) {
        *lock(&self.state.settings) = Settings::default();
        self.set_refuse(false);
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
        self.drop_all(true);
    }
}

async fn serve(st: Arc<State>, client: TcpStream) {
    let upstream = *lock(&st.upstream);
    let Ok(Ok(server)) = tokio::time::timeout(Duration::from_secs(5), TcpStream::connect(upstream)).await else {
        let _ = client.set_zero_linger();
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let id = st.next.fetch_add(1, Ordering::SeqCst);
    let (kill, kill_rx) = watch::channel(None);
    let black_hole = Arc::new(AtomicBool::new(false));
    lock(&st.conns).insert(id, Conn { kill: kill.clone(), black_hole: black_hole.clone() });
    lock(&st.stats).connections += 1;
    let (cr, cw) = client.into_split();
    let (sr, sw) = server.into_split();
    let up = pump(st.clone(), cr, sw, Direction::Up, kill.clone(), kill_rx.clone(), black_hole.clone());
    let down = pump(st.clone(), sr, cw, Direction::Down, kill.clone(), kill_rx.clone(), black_hole);
    let (up, down) = (up.await, down.await);
    lock(&st.conns).remove(&id);
    let reset = kill_rx.borrow().unwrap_or(false);
    // Put the halves back together to end the connection the chosen way.
    if let (Ok((cr, sw)), Ok((sr, cw))) = (up, down)
        && let (Ok(c), Ok(s)) = (cr.reunite(cw), sr.reunite(sw))
    {
        if reset {
            let _ = c.set_zero_linger();
            let _ = s.set_zero_linger();
        }
        drop(c);
        drop(s);
    }
}

type Half = (tokio::net::tcp::OwnedReadHalf, tokio::net::tcp::OwnedWriteHalf);

/// Copy one direction until EOF, an error or the kill switch; returns the halves so the caller decides FIN or RST.
fn pump(
    st: Arc<State>,
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    dir: Direction,
    kill: watch::Sender<Option<bool>>,
    mut kill_rx: watch::Receiver<Option<bool>>,
    black_hole: Arc<AtomicBool>,
) -> JoinHandle<Half> {
    tokio::spawn(async move {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            if kill_rx.borrow().is_some() {
                break;
            }
            let n = tokio::select! {
                r = from.read(&mut buf) => match r { Ok(0) | Err(_) => { let _ = kill.send(Some(false)); break } Ok(n) => n },
                _ = kill_rx.changed() => break,
            };
            if black_hole.load(Ordering::SeqCst) {
                continue;
            }
            let (latency, bandwidth, take, cut) = {
                let mut s = lock(&st.settings);
                let (latency, bandwidth) = (s.latency, s.bandwidth);
                match s.cut_after.get_mut(&dir) {
                    Some(left) if *left <= n as u64 => {
                        let take = *left as usize;
                        s.cut_after.remove(&dir);
                        (latency, bandwidth, take, true)
                    }
                    Some(left) => {
                        *left -= n as u64;
                        (latency, bandwidth, n, false)
                    }
                    None => (latency, bandwidth, n, false),
                }
            };
            let mut delay = latency;
            if bandwidth > 0 {
                delay += Duration::from_secs_f64(take as f64 / bandwidth as f64);
            }
            if !delay.is_zero() {
                tokio::select! {
                    _ = tokio::time::sleep(delay) => {}
                    _ = kill_rx.changed() => break,
                }
            }
            if to.write_all(&buf[..take]).await.is_err() {
                let _ = kill.send(Some(false));
                break;
            }
            {
                let mut s = lock(&st.stats);
                match dir {
                    Direction::Up => s.bytes_up += take as u64,
                    Direction::Down => s.bytes_down += take as u64,
                }
            }
            if cut {
                let reset = lock(&st.rng).chance(50);
                lock(&st.stats).cuts += 1;
                let _ = kill.send(Some(reset));
                break;
            }
        }
        (from, to)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn echo_server() -> SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = l.accept().await {
                tokio::spawn(async move {
                    let (mut r, mut w) = s.split();
                    let _ = tokio::io::copy(&mut r, &mut w).await;
                });
            }
        });
        addr
    }

    #[test]
    fn the_same_seed_gives_the_same_faults() {
        let draw = |seed| {
            let mut r = Rng::new(seed);
            (0..50).map(|_| Fault::random(&mut r, true)).collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
        let all = draw(1234);
        assert!(all.iter().any(|f| matches!(f, Fault::CutAfter(..))) && all.contains(&Fault::Drop));
    }

    #[tokio::test]
    async fn forwards_then_cuts_after_exactly_n_bytes() {
        let proxy = FaultProxy::start(echo_server().await, 1).await.unwrap();
        let mut s = TcpStream::connect(proxy.addr()).await.unwrap();
        s.write_all(b"hello").await.unwrap();
        let mut got = [0u8; 5];
        s.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"hello");
        proxy.cut_after(Direction::Up, 3);
        s.write_all(b"abcdefgh").await.unwrap();
        let mut rest = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut rest)).await.unwrap();
        assert!(b"abc".starts_with(&rest), "only the 3 bytes before the cut come back: {rest:?}");
        assert_eq!(proxy.stats().cuts, 1);
        assert_eq!(proxy.stats().bytes_up, 5 + 3);
    }

    #[tokio::test]
    async fn half_open_swallows_without_closing_and_refuse_resets() {
        let proxy = FaultProxy::start(echo_server().await, 2).await.unwrap();
        let mut s = TcpStream::connect(proxy.addr()).await.unwrap();
        s.write_all(b"x").await.unwrap();
        let mut one = [0u8; 1];
        s.read_exact(&mut one).await.unwrap();
        proxy.half_open();
        s.write_all(b"lost").await.unwrap();
        let r = tokio::time::timeout(Duration::from_millis(300), s.read(&mut one)).await;
        assert!(r.is_err(), "nothing comes back and the connection is not closed: {r:?}");
        proxy.drop_all(false);
        let r = tokio::time::timeout(Duration::from_secs(5), s.read(&mut one)).await.unwrap();
        assert!(matches!(r, Ok(0) | Err(_)), "cut after the half-open: {r:?}");
        proxy.set_refuse(true);
        let mut s = TcpStream::connect(proxy.addr()).await.unwrap();
        let r = tokio::time::timeout(Duration::from_secs(5), s.read(&mut one)).await.unwrap();
        assert!(matches!(r, Ok(0) | Err(_)));
        assert_eq!(proxy.stats().refused, 1);
    }

    #[tokio::test]
    async fn latency_and_bandwidth_slow_the_line() {
        let proxy = FaultProxy::start(echo_server().await, 3).await.unwrap();
        let mut s = TcpStream::connect(proxy.addr()).await.unwrap();
        proxy.set_bandwidth(100_000);
        let t = std::time::Instant::now();
        let data = vec![7u8; 20_000];
        s.write_all(&data).await.unwrap();
        let mut back = vec![0u8; data.len()];
        s.read_exact(&mut back).await.unwrap();
        // 20 kB each way at 100 kB/s: at least ~0.2 s per direction (a lower bound only: never flaky on a slow box)
        assert!(t.elapsed() >= Duration::from_millis(300), "{:?}", t.elapsed());
        assert_eq!(back, data);
    }
}
