//! Which of the two wire protocols a profile speaks: the one definition every crate uses.

use serde::{Deserialize, Serialize};

/// The adapter protocol (`adapter.md`, A-n) or Hermes Chat v3 through a gateway (`chat-v3.md`, G-n).
///
/// Spelled `adapter` / `v3` everywhere: serde (IPC, the devserver's log), [`Dialect::as_str`], [`std::str::FromStr`]
/// (the CLI's `--dialect`) and the store's column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// The mobile adapter: one server-side session `mobile:<device id>`.
    Adapter,
    /// Hermes Chat v3: many sessions, one per conversation.
    V3,
}

impl Dialect {
    /// Both dialects.
    pub const ALL: &'static [Dialect] = &[Dialect::Adapter, Dialect::V3];

    /// The one spelling (`adapter` / `v3`).
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Adapter => "adapter",
            Dialect::V3 => "v3",
        }
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word that is neither `adapter` nor `v3`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown dialect {0:?} (expected adapter or v3)")]
pub struct UnknownDialect(pub String);

impl std::str::FromStr for Dialect {
    type Err = UnknownDialect;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dialect::ALL.iter().copied().find(|d| d.as_str() == s).ok_or_else(|| UnknownDialect(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_spelling_for_serde_as_str_and_from_str() {
        for &d in Dialect::ALL {
            assert_eq!(serde_json::to_value(d).unwrap(), serde_json::Value::String(d.as_str().into()));
            assert_eq!(d.as_str().parse::<Dialect>(), Ok(d));
            assert_eq!(d.to_string(), d.as_str());
        }
        assert_eq!(Dialect::Adapter.as_str(), "adapter");
        assert_eq!(Dialect::V3.as_str(), "v3");
        assert_eq!("V3".parse::<Dialect>(), Err(UnknownDialect("V3".into())));
        assert!(serde_json::from_str::<Dialect>("\"mobile\"").is_err());
    }
}
