//! Hands the start-up's freed heap back to the system once the app has settled.
//!
//! Starting takes a burst of short-lived allocations on several threads — WebKit's and GTK's set-up in this process,
//! the page's files decompressed and served, the first history page read and serialised, the font and keychain
//! probes — and glibc's allocator keeps the pages of what was freed for later allocations in the same arena. Nothing
//! of the kind comes later in a chat app that sits idle for hours, so those pages only weigh on the machine: 2–3 MB
//! of the app's process (the memory bench in bench/README.md; which of those allocations left them was not
//! traced — asking fontconfig for less changed nothing). `malloc_trim` returns every free page of every arena.

/// How long after the window is built: the launch, the first history paint and the typography warm-up (2 s after
/// the page starts) are over by then on a slow machine.
pub const AFTER: std::time::Duration = std::time::Duration::from_secs(5);

/// Trims the heap once, [`AFTER`] from now, on a thread of its own.
pub fn trim_after_startup() {
    let spawned = std::thread::Builder::new().name("heap-trim".into()).spawn(|| {
        std::thread::sleep(AFTER);
        let released = trim();
        tracing::debug!(released, "returned the start-up's free heap pages");
    });
    if let Err(e) = spawned {
        tracing::warn!("cannot start the heap trim: {e}");
    }
}

/// Returns the free pages of every malloc arena to the system; true when some memory was released. (glibc only:
/// elsewhere the allocators give memory back on their own, or keep no per-thread arenas.)
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn trim() -> bool {
    // SAFETY: malloc_trim has no preconditions; it takes each arena's lock like any malloc call.
    #[allow(unsafe_code)]
    let released = unsafe { libc::malloc_trim(0) };
    released == 1
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn trim() -> bool {
    false
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    /// Resident bytes of this process (`/proc/self/statm`, pages × 4 KiB).
    fn resident() -> usize {
        let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
        statm.split_whitespace().nth(1).unwrap().parse::<usize>().unwrap() * 4096
    }

    #[test]
    fn trim_returns_freed_small_allocations_to_the_system() {
        // 64 MiB of 2 KiB blocks, each written (resident), then all freed but the newest: the top of the heap stays in
        // use, so only a trim of the free pages inside the heap (not a shrink of its end) can release them
        const MIB: usize = 1 << 20;
        let mut blocks: Vec<Vec<u8>> = (0..64 * MIB / 2048).map(|i| vec![i as u8 | 1; 2048]).collect();
        let keep = blocks.pop().unwrap();
        drop(blocks);
        let before = resident();
        assert!(super::trim(), "nothing released");
        let after = resident();
        assert!(before.saturating_sub(after) > 32 * MIB, "resident {before} → {after} bytes");
        assert_eq!(keep[0], ((64 * MIB / 2048 - 1) as u8) | 1);
    }
}
