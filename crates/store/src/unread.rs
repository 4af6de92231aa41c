//! What the user has read, per conversation (schema version 3): unread counts that survive a restart.

use crate::{Result, Store};

impl Store {
    /// The agent's messages in the conversation that came after the user last had it open (0 for no such
    /// conversation).
    pub fn unread_count(&self, conversation_id: &str) -> Result<u32> {
        let n: i64 = self
            .conn
            .prepare_cached(
                "SELECT COUNT(*) FROM messages INDEXED BY messages_incoming
                 WHERE conversation_id = ?1 AND direction = 'in'
                   AND seq > (SELECT read_upto FROM conversations WHERE id = ?1)",
            )?
            .query_row([conversation_id], |r| r.get(0))?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// The user has the conversation open: everything in it so far is read. A missing conversation is not an error
    /// (it may have just been deleted).
    pub fn mark_read(&self, conversation_id: &str) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE conversations
                 SET read_upto = COALESCE((SELECT MAX(seq) FROM messages WHERE conversation_id = ?1), 0)
                 WHERE id = ?1",
            )?
            .execute([conversation_id])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::*;

    fn store_with_chat() -> (Store, Conversation) {
        let s = Store::open_in_memory().unwrap();
        let p = s.profile_create(&NewProfile::adapter("p", "ws://127.0.0.1:1")).unwrap();
        let c = s.conversation_for_adapter(&p.id).unwrap();
        (s, c)
    }

    #[test]
    fn the_agents_messages_after_the_last_read_are_unread() {
        let (s, c) = store_with_chat();
        assert_eq!(s.unread_count(&c.id).unwrap(), 0);
        s.message_upsert(&Message::new(&c.id, Direction::Down, "one", 1)).unwrap();
        s.message_upsert(&Message::new(&c.id, Direction::Up, "mine", 2)).unwrap();
        s.message_upsert(&Message::new(&c.id, Direction::Down, "two", 3)).unwrap();
        assert_eq!(s.unread_count(&c.id).unwrap(), 2, "the user's own message is not unread");
        s.mark_read(&c.id).unwrap();
        assert_eq!(s.unread_count(&c.id).unwrap(), 0);
        s.message_upsert(&Message::new(&c.id, Direction::Down, "three", 4)).unwrap();
        assert_eq!(s.unread_count(&c.id).unwrap(), 1);
        // an edit of a read message (a streamed reply growing) is not a new unread one
        s.mark_read(&c.id).unwrap();
        let mut m = s.page(&c.id, None, 1).unwrap().messages.remove(0);
        m.text.push_str(" more");
        s.message_upsert(&m).unwrap();
        assert_eq!(s.unread_count(&c.id).unwrap(), 0);
    }

    #[test]
    fn unknown_conversations_have_nothing_unread_and_marking_them_is_harmless() {
        let (s, _) = store_with_chat();
        assert_eq!(s.unread_count("nope").unwrap(), 0);
        s.mark_read("nope").unwrap();
    }

    #[test]
    fn the_count_reads_the_incoming_index_not_the_history() {
        let (s, c) = store_with_chat();
        let plan: Vec<String> = s
            .conn
            .prepare(
                "EXPLAIN QUERY PLAN SELECT COUNT(*) FROM messages INDEXED BY messages_incoming
                 WHERE conversation_id = ?1 AND direction = 'in'
                   AND seq > (SELECT read_upto FROM conversations WHERE id = ?1)",
            )
            .unwrap()
            .query_map([&c.id], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(plan.iter().any(|l| l.contains("messages_incoming") && l.contains("rowid>?")), "{plan:?}");
    }
}
