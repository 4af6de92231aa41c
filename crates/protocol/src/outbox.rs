//! The in-memory side of the outbox (A-6, G-10): pending → in flight → confirmed.
//!
//! Durability is the store's job (the engine writes an entry before handing it here). This machine only decides
//! what to send next and what a Pong confirms. An item is *in flight* once its frames were handed to the socket;
//! it is tagged with the sequence number of the next Ping. A Pong carrying sequence `n` — which the peer's WebSocket
//! layer can only produce after reading every earlier frame — confirms every in-flight item tagged `≤ n`.
//! A disconnect moves in-flight items back to pending; they keep their original order and ids.

use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemState {
    Pending,
    /// Handed to the socket, waiting for the Pong of ping `seq`.
    InFlight {
        ping_seq: u64,
    },
}

#[derive(Debug, Clone)]
struct Entry<T> {
    id: String,
    item: T,
    state: ItemState,
}

#[derive(Debug, Clone)]
pub struct Outbox<T> {
    /// Keyed by insertion order: iteration order is the original order.
    entries: BTreeMap<u64, Entry<T>>,
    next_order: u64,
}

impl<T> Default for Outbox<T> {
    fn default() -> Self {
        Outbox { entries: BTreeMap::new(), next_order: 0 }
    }
}

impl<T> Outbox<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Queue an item. An id already queued is not queued twice (returns false).
    pub fn push(&mut self, id: impl Into<String>, item: T) -> bool {
        let id = id.into();
        if self.contains(&id) {
            return false;
        }
        self.entries.insert(self.next_order, Entry { id, item, state: ItemState::Pending });
        self.next_order += 1;
        true
    }

    pub fn contains(&self, id: &str) -> bool {
        self.entries.values().any(|e| e.id == id)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn pending_count(&self) -> usize {
        self.entries.values().filter(|e| e.state == ItemState::Pending).count()
    }

    /// The first pending item in original order.
    pub fn next_pending(&self) -> Option<(&str, &T)> {
        self.entries.values().find(|e| e.state == ItemState::Pending).map(|e| (e.id.as_str(), &e.item))
    }

    /// All frames of `id` were written; it waits for the Pong of ping `ping_seq`.
    pub fn mark_in_flight(&mut self, id: &str, ping_seq: u64) {
        if let Some(e) = self.entries.values_mut().find(|e| e.id == id) {
            e.state = ItemState::InFlight { ping_seq };
        }
    }

    /// A Pong for ping `seq`: every item in flight with a tag `≤ seq` is confirmed and removed. Returns their ids in
    /// original order.
    pub fn handle_pong(&mut self, seq: u64) -> Vec<String> {
        let done: Vec<u64> = self
            .entries
            .iter()
            .filter(|(_, e)| matches!(e.state, ItemState::InFlight { ping_seq } if ping_seq <= seq))
            .map(|(k, _)| *k)
            .collect();
        done.into_iter().filter_map(|k| self.entries.remove(&k)).map(|e| e.id).collect()
    }

    /// The connection dropped: everything in flight is pending again, in original order.
    pub fn handle_disconnect(&mut self) -> usize {
        let mut n = 0;
        for e in self.entries.values_mut() {
            if e.state != ItemState::Pending {
                e.state = ItemState::Pending;
                n += 1;
            }
        }
        n
    }

    /// Remove an item (cancelled, or refused for good). Returns it.
    pub fn remove(&mut self, id: &str) -> Option<T> {
        let key = self.entries.iter().find(|(_, e)| e.id == id).map(|(k, _)| *k)?;
        self.entries.remove(&key).map(|e| e.item)
    }

    pub fn get(&self, id: &str) -> Option<&T> {
        self.entries.values().find(|e| e.id == id).map(|e| &e.item)
    }

    pub fn state(&self, id: &str) -> Option<ItemState> {
        self.entries.values().find(|e| e.id == id).map(|e| e.state)
    }

    /// Ids in original order with their state.
    pub fn ids(&self) -> Vec<(String, ItemState)> {
        self.entries.values().map(|e| (e.id.clone(), e.state)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a6_pong_confirms_only_items_written_before_its_ping() {
        let mut ob = Outbox::new();
        ob.push("a", ());
        ob.push("b", ());
        ob.mark_in_flight("a", 1);
        ob.mark_in_flight("b", 2);
        assert_eq!(ob.handle_pong(1), vec!["a".to_string()]);
        assert_eq!(ob.state("b"), Some(ItemState::InFlight { ping_seq: 2 }));
        assert_eq!(ob.handle_pong(5), vec!["b".to_string()]);
        assert!(ob.is_empty());
    }

    #[test]
    fn a6_disconnect_requeues_in_flight_in_original_order_with_same_ids() {
        let mut ob = Outbox::new();
        for id in ["m1", "m2", "m3"] {
            ob.push(id, id.len());
        }
        ob.mark_in_flight("m1", 1);
        ob.mark_in_flight("m2", 1);
        assert_eq!(ob.handle_disconnect(), 2);
        assert_eq!(ob.next_pending().map(|(id, _)| id), Some("m1"));
        let ids: Vec<String> = ob.ids().into_iter().map(|(id, _)| id).collect();
        assert_eq!(ids, vec!["m1", "m2", "m3"]);
        assert!(ob.ids().iter().all(|(_, s)| *s == ItemState::Pending));
    }

    #[test]
    fn a6_same_id_is_never_queued_twice_and_confirmed_is_never_resent() {
        let mut ob = Outbox::new();
        assert!(ob.push("x", 1));
        assert!(!ob.push("x", 2));
        ob.mark_in_flight("x", 1);
        assert_eq!(ob.handle_pong(1), vec!["x".to_string()]);
        ob.handle_disconnect();
        assert!(ob.next_pending().is_none());
    }
}
