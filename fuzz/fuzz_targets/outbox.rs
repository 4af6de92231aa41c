//! A-6 / G-10: the in-memory outbox against a simple model under arbitrary push / send / pong / disconnect / remove
//! sequences. Never panics; never two entries with one id; original order kept; a pong confirms exactly the items in
//! flight with a tag ≤ its sequence; a confirmed or removed id never comes back; a disconnect requeues everything.
#![no_main]

use arbitrary::Arbitrary;
use hermes_protocol::outbox::{ItemState, Outbox};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Op {
    Push(u8),
    SendNext(u8),
    MarkInFlight(u8, u8),
    Pong(u8),
    Disconnect,
    Remove(u8),
}

fuzz_target!(|ops: Vec<Op>| {
    let mut ob: Outbox<u8> = Outbox::new();
    // the model: (id, item, state) in original order
    let mut model: Vec<(String, u8, ItemState)> = Vec::new();
    let mut gone: Vec<String> = Vec::new();
    for op in ops.into_iter().take(512) {
        match op {
            Op::Push(n) => {
                let id = format!("m{}", n % 32);
                let fresh = !model.iter().any(|(i, ..)| *i == id);
                assert_eq!(ob.push(id.clone(), n), fresh);
                if fresh {
                    model.push((id.clone(), n, ItemState::Pending));
                    gone.retain(|g| *g != id);
                }
            }
            Op::SendNext(seq) => {
                let expect = model.iter().find(|(_, _, s)| *s == ItemState::Pending).map(|(i, n, _)| (i.clone(), *n));
                let got = ob.next_pending().map(|(i, n)| (i.to_string(), *n));
                assert_eq!(got, expect);
                if let Some((id, _)) = got {
                    ob.mark_in_flight(&id, u64::from(seq));
                    if let Some(e) = model.iter_mut().find(|(i, ..)| *i == id) {
                        e.2 = ItemState::InFlight { ping_seq: u64::from(seq) };
                    }
                }
            }
            Op::MarkInFlight(n, seq) => {
                let id = format!("m{}", n % 32);
                ob.mark_in_flight(&id, u64::from(seq));
                if let Some(e) = model.iter_mut().find(|(i, ..)| *i == id) {
                    e.2 = ItemState::InFlight { ping_seq: u64::from(seq) };
                }
            }
            Op::Pong(seq) => {
                let seq = u64::from(seq);
                let expect: Vec<String> = model
                    .iter()
                    .filter(|(_, _, s)| matches!(s, ItemState::InFlight { ping_seq } if *ping_seq <= seq))
                    .map(|(i, ..)| i.clone())
                    .collect();
                assert_eq!(ob.handle_pong(seq), expect);
                model.retain(|(i, ..)| !expect.contains(i));
                gone.extend(expect);
            }
            Op::Disconnect => {
                let n = model.iter().filter(|(_, _, s)| *s != ItemState::Pending).count();
                assert_eq!(ob.handle_disconnect(), n);
                for e in &mut model {
                    e.2 = ItemState::Pending;
                }
            }
            Op::Remove(n) => {
                let id = format!("m{}", n % 32);
                let expect = model.iter().position(|(i, ..)| *i == id).map(|p| model.remove(p).1);
                assert_eq!(ob.remove(&id), expect);
                if expect.is_some() {
                    gone.push(id);
                }
            }
        }
        let ids: Vec<(String, ItemState)> = model.iter().map(|(i, _, s)| (i.clone(), *s)).collect();
        assert_eq!(ob.ids(), ids);
        assert_eq!(ob.len(), model.len());
        for g in &gone {
            assert!(!ob.contains(g), "{g} came back");
        }
    }
});
