//! How events reach the consumer: in batches, with the emptied batch vectors handed back for reuse.

use std::collections::VecDeque;
use std::sync::Arc;

use hermes_protocol::Event;
use tokio::sync::mpsc;

/// At most this many events travel in one batch.
pub(super) const MAX_BATCH: usize = 256;

/// The engine's events, in order. They travel in batches (one channel operation and at most one wake-up of the
/// consumer per burst of frames, not per event); [`Events::recv`] hands them out one at a time, like a channel.
#[derive(Debug)]
pub struct Events {
    rx: mpsc::Receiver<Vec<Event>>,
    batch: VecDeque<Event>,
    spare: Spare,
}

impl Events {
    pub(super) fn new(rx: mpsc::Receiver<Vec<Event>>, spare: Spare) -> Events {
        Events { rx, batch: VecDeque::new(), spare }
    }

    /// The next event; `None` once the engine has stopped and every event was taken. Cancel-safe (`select!`).
    pub async fn recv(&mut self) -> Option<Event> {
        loop {
            if let Some(ev) = self.batch.pop_front() {
                return Some(ev);
            }
            let next = self.rx.recv().await?;
            self.take(next);
        }
    }

    /// The next event if one is waiting now.
    pub fn try_recv(&mut self) -> Option<Event> {
        loop {
            if let Some(ev) = self.batch.pop_front() {
                return Some(ev);
            }
            let next = self.rx.try_recv().ok()?;
            self.take(next);
        }
    }

    /// Every event waiting now (at least one; waits for it), in order: for consumers that handle bursts at once.
    /// Empty once the engine has stopped and every event was taken. Cancel-safe.
    pub async fn recv_batch(&mut self) -> Vec<Event> {
        let mut out: Vec<Event> = self.batch.drain(..).collect();
        if out.is_empty() {
            match self.rx.recv().await {
                Some(b) => out = b,
                None => return out,
            }
        }
        while let Ok(mut b) = self.rx.try_recv() {
            out.append(&mut b);
            self.spare.put(b);
        }
        out
    }

    /// The next batch becomes the current one; the emptied one goes back to the engine.
    fn take(&mut self, next: Vec<Event>) {
        let done = std::mem::replace(&mut self.batch, VecDeque::from(next));
        self.spare.put(Vec::from(done));
    }
}

/// Emptied batch vectors, handed back from [`Events`] to the engine. Without them each burst allocated its
/// batch (up to 256 events of 176 bytes: 44 KiB) on the engine's thread and freed it on the consumer's; with glibc
/// that large request also merged the small chunks the consumer had freed (the events' strings) on every burst
/// (`malloc_consolidate`), which sent the engine's next small allocations down `_int_malloc`'s slow path.
#[derive(Debug, Default, Clone)]
pub(super) struct Spare(Arc<std::sync::Mutex<Vec<Vec<Event>>>>);

/// At most this many spare batch vectors are kept.
const MAX_SPARE: usize = 4;

impl Spare {
    pub(super) fn put(&self, v: Vec<Event>) {
        if !v.is_empty() || v.capacity() == 0 || v.capacity() > 2 * MAX_BATCH {
            return;
        }
        if let Ok(mut spare) = self.0.lock()
            && spare.len() < MAX_SPARE
        {
            spare.push(v);
        }
    }

    /// An empty vector, with room for a batch when one came back.
    pub(super) fn take(&self) -> Vec<Event> {
        self.0.lock().ok().and_then(|mut spare| spare.pop()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typing(n: usize) -> Vec<Event> {
        (0..n).map(|i| Event::Typing { on: i % 2 == 0 }).collect()
    }

    /// Batches come out one event at a time, in order, whichever way they are taken, and each emptied batch vector
    /// goes back to the engine's spares — at most `MAX_SPARE` of them, and only empty ones.
    #[tokio::test]
    async fn events_come_in_order_and_emptied_batches_are_reused() {
        let (tx, rx) = mpsc::channel(8);
        let spare = Spare::default();
        let mut events = Events { rx, batch: VecDeque::new(), spare: spare.clone() };
        let mut sent = Vec::new();
        for n in [3, 1, 2, 5, 4, 2, 1] {
            let mut b = spare.take();
            b.extend(typing(n));
            sent.extend(b.iter().cloned());
            tx.send(b).await.unwrap();
        }
        let mut got = vec![events.recv().await.unwrap(), events.try_recv().unwrap()];
        got.extend(events.recv_batch().await);
        drop(tx);
        assert_eq!(events.recv().await, None);
        assert_eq!(got, sent);
        let kept = spare.0.lock().unwrap();
        assert!(!kept.is_empty() && kept.len() <= MAX_SPARE);
        assert!(kept.iter().all(|v| v.is_empty() && v.capacity() > 0));
        drop(kept);
        spare.put(typing(1));
        spare.put(Vec::with_capacity(4 * MAX_BATCH));
        assert!(spare.0.lock().unwrap().iter().all(|v| v.is_empty() && v.capacity() <= 2 * MAX_BATCH));
    }
}
