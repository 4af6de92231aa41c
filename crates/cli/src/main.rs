//! hermes-chat: terminal client and --jsonl scripting interface.
fn main() {}
