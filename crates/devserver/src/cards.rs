//! Button cards (A-12…A-17): who may answer, the safe choice for an invalid option, expiry.

use std::collections::HashMap;

use hermes_protocol::adapter::{PromptDone, PromptOption};

#[derive(Debug, Clone)]
pub(crate) struct Card {
    /// The device the card was shown to.
    pub device: String,
    pub kind: String,
    pub options: Vec<PromptOption>,
}

/// What an answer leads to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// another device answered.
    Forbidden,
    /// First answer: send this `prompt_done`, log it and let the demo act on `option_id`.
    Done { done: PromptDone, kind: String, option_id: String, option_label: String },
    /// The card was already answered or expired, or is unknown: send this `prompt_done` again
    /// (the original outcome, or `expired: true`). `answered` says whether it was a real answer (a repeat).
    Again { done: PromptDone, answered: bool },
}

#[derive(Debug, Default)]
pub(crate) struct Cards {
    open: HashMap<String, Card>,
    /// Closed cards: device and the `prompt_done` that closed it.
    closed: HashMap<String, (String, PromptDone, bool)>,
}

/// the safe choice of a card: `deny`, else `cancel`.
pub(crate) fn safe_choice(options: &[PromptOption]) -> String {
    ["deny", "cancel"]
        .iter()
        .find(|s| options.iter().any(|o| o.id == **s))
        .map_or_else(|| "cancel".to_string(), |s| s.to_string())
}

pub(crate) fn expired(prompt_id: &str) -> PromptDone {
    PromptDone { prompt_id: Some(prompt_id.to_string()), id: None, option_id: None, expired: Some(true) }
}

impl Cards {
    pub(crate) fn open(&mut self, id: &str, card: Card) {
        self.open.insert(id.to_string(), card);
    }

    /// An answer from `device`.
    pub(crate) fn answer(
        &mut self,
        prompt_id: &str,
        device: &str,
        option_id: Option<&str>,
        text: Option<&str>,
    ) -> Answer {
        if let Some(card) = self.open.get(prompt_id) {
            if card.device != device {
                return Answer::Forbidden;
            }
            let valid = |o: &str| card.options.iter().any(|x| x.id == o);
            let chosen = match option_id {
                Some(o) if valid(o) => o.to_string(),
                // free text without option_id means `other`
                None if text.is_some() && valid("other") => "other".to_string(),
                _ => safe_choice(&card.options),
            };
            let label = card.options.iter().find(|o| o.id == chosen).map_or_else(String::new, |o| o.label.clone());
            let kind = card.kind.clone();
            let dev = card.device.clone();
            self.open.remove(prompt_id);
            let done = PromptDone {
                prompt_id: Some(prompt_id.to_string()),
                id: None,
                option_id: Some(chosen.clone()),
                expired: None,
            };
            self.closed.insert(prompt_id.to_string(), (dev, done.clone(), true));
            return Answer::Done { done, kind, option_id: chosen, option_label: label };
        }
        match self.closed.get(prompt_id) {
            Some((dev, _, _)) if dev != device => Answer::Forbidden,
            Some((_, done, answered)) => Answer::Again { done: done.clone(), answered: *answered },
            None => Answer::Again { done: expired(prompt_id), answered: false },
        }
    }

    /// the card's time is up. Returns its device if it was still open.
    pub(crate) fn expire(&mut self, prompt_id: &str) -> Option<String> {
        let card = self.open.remove(prompt_id)?;
        self.closed.insert(prompt_id.to_string(), (card.device.clone(), expired(prompt_id), false));
        Some(card.device)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opt(id: &str) -> PromptOption {
        PromptOption { id: id.into(), label: id.to_uppercase(), style: None }
    }

    fn cards() -> Cards {
        let mut c = Cards::default();
        c.open(
            "p",
            Card { device: "d1".into(), kind: "exec_approval".into(), options: vec![opt("allow-once"), opt("deny")] },
        );
        c.open(
            "q",
            Card { device: "d1".into(), kind: "clarify".into(), options: vec![opt("c0"), opt("other"), opt("cancel")] },
        );
        c
    }

    #[test]
    fn a15_a17_rules() {
        let mut c = cards();
        assert_eq!(c.answer("p", "d2", Some("allow-once"), None), Answer::Forbidden);
        let Answer::Done { option_id, .. } = c.answer("p", "d1", Some("bogus"), None) else { panic!() };
        assert_eq!(option_id, "deny");
        // repeat: same outcome again; other device still forbidden
        let Answer::Again { done, answered: true } = c.answer("p", "d1", Some("allow-once"), None) else { panic!() };
        assert_eq!(done.option_id.as_deref(), Some("deny"));
        assert_eq!(c.answer("p", "d2", None, None), Answer::Forbidden);
        let Answer::Done { option_id, .. } = c.answer("q", "d1", None, Some("YAML")) else { panic!() };
        assert_eq!(option_id, "other");
    }

    #[test]
    fn a16_expiry_and_unknown() {
        let mut c = cards();
        assert_eq!(c.expire("p").as_deref(), Some("d1"));
        assert_eq!(c.expire("p"), None);
        assert_eq!(c.answer("p", "d1", Some("deny"), None), Answer::Again { done: expired("p"), answered: false });
        assert_eq!(c.answer("zz", "d1", Some("deny"), None), Answer::Again { done: expired("zz"), answered: false });
    }
}
