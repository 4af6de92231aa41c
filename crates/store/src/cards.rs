//! The agent's cards (schema version 4): approval and question prompts with their outcome, kept with the conversation.

use rusqlite::{OptionalExtension as _, params};

use crate::{Card, CardDone, Result, Store};

const COLS: &str = "conversation_id, id, kind, text, options, command, description, timeout_seconds, created_at, done_option, done_expired";

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Card> {
    let options: String = r.get(4)?;
    let expired: Option<i64> = r.get(10)?;
    Ok(Card {
        conversation_id: r.get(0)?,
        id: r.get(1)?,
        kind: r.get(2)?,
        text: r.get(3)?,
        options: serde_json::from_str(&options).unwrap_or_default(),
        command: r.get(5)?,
        description: r.get(6)?,
        timeout_seconds: r.get(7)?,
        created_at: r.get(8)?,
        done: expired.map(|e| CardDone { option_id: r.get(9).ok().flatten(), expired: e != 0 }),
    })
}

impl Store {
    /// Keeps a card the agent showed. The same card again (a repeated frame) changes nothing: the first one stays,
    /// with its outcome.
    pub fn card_insert(&self, card: &Card) -> Result<()> {
        let options = serde_json::to_string(&card.options).unwrap_or_else(|_| "[]".into());
        self.conn
            .prepare_cached(
                "INSERT INTO cards (conversation_id, id, kind, text, options, command, description, timeout_seconds,
                                    created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT (conversation_id, id) DO NOTHING",
            )?
            .execute(params![
                card.conversation_id,
                card.id,
                card.kind,
                card.text,
                options,
                card.command,
                card.description,
                card.timeout_seconds,
                card.created_at
            ])?;
        Ok(())
    }

    /// The card `id` of one of the profile's conversations is done (`prompt_done`, A-15, A-16): answered with
    /// `option_id`, or expired. Unknown ids are ignored.
    pub fn card_done(&self, profile_id: &str, id: &str, option_id: Option<&str>, expired: bool) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE cards SET done_option = ?3, done_expired = ?4
                 WHERE id = ?2 AND conversation_id IN (SELECT id FROM conversations WHERE profile_id = ?1)",
            )?
            .execute(params![profile_id, id, option_id, i64::from(expired)])?;
        Ok(())
    }

    /// The conversation's card `id`, if kept.
    pub fn card_get(&self, conversation_id: &str, id: &str) -> Result<Option<Card>> {
        Ok(self
            .conn
            .prepare_cached(&format!("SELECT {COLS} FROM cards WHERE conversation_id = ?1 AND id = ?2"))?
            .query_row([conversation_id, id], from_row)
            .optional()?)
    }

    /// The conversation's cards without an outcome whose time (`timeout_seconds` from when they were shown) has not run
    /// out at `now` (ms); a card without a timeout waits for good.
    pub fn cards_waiting(&self, conversation_id: &str, now: i64) -> Result<Vec<Card>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLS} FROM cards WHERE conversation_id = ?1 AND done_expired IS NULL
               AND (timeout_seconds IS NULL OR created_at + timeout_seconds * 1000 > ?2)
             ORDER BY created_at, id"
        ))?;
        let rows = stmt.query_map(params![conversation_id, now], from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The conversation's cards shown at or after `from` and before `to` (ms; `None`: no bound), oldest first.
    pub fn cards_between(&self, conversation_id: &str, from: Option<i64>, to: Option<i64>) -> Result<Vec<Card>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLS} FROM cards WHERE conversation_id = ?1 AND created_at >= ?2 AND created_at < ?3
             ORDER BY created_at, id"
        ))?;
        let rows =
            stmt.query_map(params![conversation_id, from.unwrap_or(i64::MIN), to.unwrap_or(i64::MAX)], from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

#[cfg(test)]
mod tests {
    use crate::*;

    fn chat() -> (Store, Profile, Conversation) {
        let s = Store::open_in_memory().unwrap();
        let p = s.profile_create(&NewProfile::adapter("p", "ws://127.0.0.1:1")).unwrap();
        let c = s.conversation_for_adapter(&p.id).unwrap();
        (s, p, c)
    }

    fn card(c: &Conversation, id: &str, at: i64) -> Card {
        Card {
            conversation_id: c.id.clone(),
            id: id.into(),
            kind: "exec_approval".into(),
            text: "Run it?".into(),
            options: serde_json::json!([{"id": "once", "label": "Allow once", "style": "primary"}]),
            command: Some("rm -rf build/".into()),
            description: Some("clean".into()),
            timeout_seconds: Some(300),
            created_at: at,
            done: None,
        }
    }

    #[test]
    fn a_card_is_kept_once_with_its_outcome() {
        let (s, p, c) = chat();
        s.card_insert(&card(&c, "k1", 1000)).unwrap();
        // the same card again: the first stays
        s.card_insert(&Card { text: "changed".into(), ..card(&c, "k1", 2000) }).unwrap();
        let got = s.card_get(&c.id, "k1").unwrap().unwrap();
        assert_eq!(got, card(&c, "k1", 1000));
        s.card_done(&p.id, "k1", Some("once"), false).unwrap();
        assert_eq!(
            s.card_get(&c.id, "k1").unwrap().unwrap().done,
            Some(CardDone { option_id: Some("once".into()), expired: false })
        );
        s.card_done(&p.id, "unknown", None, true).unwrap(); // ignored
        s.card_insert(&card(&c, "k2", 1500)).unwrap();
        s.card_done(&p.id, "k2", None, true).unwrap();
        assert_eq!(s.card_get(&c.id, "k2").unwrap().unwrap().done, Some(CardDone { option_id: None, expired: true }));
    }

    #[test]
    fn waiting_cards_are_those_without_an_outcome_still_in_time() {
        let (s, p, c) = chat();
        s.card_insert(&card(&c, "answered", 1_000)).unwrap();
        s.card_done(&p.id, "answered", Some("once"), false).unwrap();
        s.card_insert(&card(&c, "waiting", 1_000)).unwrap(); // 300 s: until 301,000
        s.card_insert(&card(&c, "late", -400_000)).unwrap();
        s.card_insert(&Card { timeout_seconds: None, ..card(&c, "no-timeout", 0) }).unwrap();
        let ids = |v: Vec<Card>| v.into_iter().map(|c| c.id).collect::<Vec<_>>();
        assert_eq!(ids(s.cards_waiting(&c.id, 300_000).unwrap()), ["no-timeout", "waiting"]);
        assert_eq!(ids(s.cards_waiting(&c.id, 301_000).unwrap()), ["no-timeout"]);
    }

    #[test]
    fn cards_are_listed_by_time_window_and_go_with_their_conversation() {
        let (s, p, c) = chat();
        for (id, at) in [("a", 100), ("b", 200), ("c", 300)] {
            s.card_insert(&card(&c, id, at)).unwrap();
        }
        let ids = |v: Vec<Card>| v.into_iter().map(|c| c.id).collect::<Vec<_>>();
        assert_eq!(ids(s.cards_between(&c.id, None, None).unwrap()), ["a", "b", "c"]);
        assert_eq!(ids(s.cards_between(&c.id, Some(200), None).unwrap()), ["b", "c"]);
        assert_eq!(ids(s.cards_between(&c.id, Some(100), Some(300)).unwrap()), ["a", "b"]);
        // another profile's done for the same id leaves this one alone
        let other = s.profile_create(&NewProfile::adapter("q", "ws://127.0.0.1:2")).unwrap();
        s.card_done(&other.id, "a", Some("once"), false).unwrap();
        assert_eq!(s.card_get(&c.id, "a").unwrap().unwrap().done, None);
        let _ = p;
        s.conversation_delete(&c.id).unwrap();
        assert!(s.cards_between(&c.id, None, None).unwrap().is_empty());
    }
}
