//! Which of the two wire protocols a profile speaks: the one definition every crate uses.

/// The adapter protocol (`adapter.md`, A-n) or Hermes Chat v3 through a gateway (`chat-v3.md`, G-n).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Adapter,
    V3,
}
