//! What `/proc` says of the app's processes and threads: the tree below a pid, CPU clock ticks by process and by
//! thread (the benches' CPU figures and the voice tests' thread checks).

use std::collections::{BTreeMap, HashMap};

/// One `/proc/…/stat` line: the name (`comm`), the parent pid and the user + system clock ticks.
pub struct Stat {
    pub comm: String,
    pub ppid: u32,
    pub ticks: u64,
}

/// Parses a `stat` file (a process's or a thread's); `None` when it is gone or unreadable.
pub fn stat(path: &str) -> Option<Stat> {
    let s = std::fs::read_to_string(path).ok()?;
    let (open, close) = (s.find('(')?, s.rfind(')')?);
    let f: Vec<&str> = s.get(close + 2..)?.split_whitespace().collect();
    let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    Some(Stat { comm: s[open + 1..close].to_string(), ppid: num(1) as u32, ticks: num(11) + num(12) })
}

/// Processes below `root` (by parent pid).
pub fn descendants(root: u32) -> Vec<u32> {
    let mut parent = HashMap::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        if let Some(s) = stat(&format!("/proc/{pid}/stat")) {
            parent.insert(pid, s.ppid);
        }
    }
    let mut below: Vec<u32> = parent
        .keys()
        .copied()
        .filter(|&pid| {
            let mut p = parent.get(&pid).copied().unwrap_or(0);
            while p > 1 {
                if p == root {
                    return true;
                }
                p = parent.get(&p).copied().unwrap_or(0);
            }
            false
        })
        .collect();
    below.sort_unstable();
    below
}

/// `root` and every process below it.
pub fn tree(root: u32) -> Vec<u32> {
    let mut all = vec![root];
    all.extend(descendants(root));
    all
}

/// A process's CPU clock ticks (user + system) so far; 0 once it is gone.
pub fn ticks(pid: u32) -> u64 {
    stat(&format!("/proc/{pid}/stat")).map_or(0, |s| s.ticks)
}

/// Each process of `root`'s tree: its name and its clock ticks.
pub fn ticks_by_process(root: u32) -> BTreeMap<u32, (String, u64)> {
    tree(root)
        .into_iter()
        .filter_map(|pid| stat(&format!("/proc/{pid}/stat")).map(|s| (pid, (s.comm, s.ticks))))
        .collect()
}

/// The threads of `pid` that used at least `min` % of one core between two [`thread_ticks`] of it `secs` apart, the
/// busiest first, as `name/tid(wchan) %`: the tid tells the main thread (= pid) from unnamed ones (an unnamed thread
/// has its creator's name), and the kernel function it waits in (`wchan`: a poller sleeps in `hrtimer_nanosleep`, an
/// event loop in `do_sys_poll`) tells what it is.
pub fn busiest_threads(
    pid: u32,
    before: &HashMap<u32, (String, u64)>,
    after: &HashMap<u32, (String, u64)>,
    secs: f64,
    min: f64,
) -> Vec<String> {
    let mut busy: Vec<(f64, String)> = after
        .iter()
        .map(|(tid, (name, t))| {
            let wchan = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/wchan")).unwrap_or_default();
            let pct = t.saturating_sub(before.get(tid).map_or(0, |b| b.1)) as f64 / secs;
            (pct, format!("{name}/{tid}({wchan})"))
        })
        .filter(|(p, _)| *p >= min)
        .collect();
    busy.sort_by(|x, y| y.0.total_cmp(&x.0));
    busy.into_iter().map(|(p, name)| format!("{name} {p:.2}")).collect()
}

/// Each thread of a process: tid → (name, clock ticks).
pub fn thread_ticks(pid: u32) -> HashMap<u32, (String, u64)> {
    let mut m = HashMap::new();
    for e in std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten() {
        let Ok(tid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        if let Some(s) = stat(&e.path().join("stat").to_string_lossy()) {
            m.insert(tid, (s.comm, s.ticks));
        }
    }
    m
}
