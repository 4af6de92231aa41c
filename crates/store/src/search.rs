//! Full-text search (FTS5, bm25 ranking, snippets).

use rusqlite::params;

use crate::{Result, SearchHit, SearchOptions, Store};

/// Turns free user input into a safe FTS5 query: every word becomes a double-quoted string
/// (inner `"` doubled), so operators (`AND`, `NEAR`, `-`, `:`, `*`, parentheses…) are taken
/// literally and no input can cause an FTS syntax error. Words are ANDed; with `prefix_last`
/// the last word also matches as a prefix (`"hel"*`). Words without any letter or digit are
/// dropped (the tokenizer would ignore them). Returns `None` if nothing searchable remains.
pub fn fts_query(input: &str, prefix_last: bool) -> Option<String> {
    let words: Vec<&str> = input.split_whitespace().filter(|w| w.chars().any(char::is_alphanumeric)).collect();
    let last = words.len().checked_sub(1)?;
    let mut q = String::with_capacity(input.len() + 4 * words.len());
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            q.push(' ');
        }
        q.push('"');
        q.push_str(&w.replace('"', "\"\""));
        q.push('"');
        if prefix_last && i == last {
            q.push('*');
        }
    }
    Some(q)
}

impl Store {
    /// Searches message text, best match first (bm25), within `opts.profile_id` or everywhere.
    /// User input is escaped by [`fts_query`]: any string is accepted; input with nothing
    /// searchable returns no hits. Snippets mark matches with `opts.open_marker` /
    /// `opts.close_marker`.
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<Vec<SearchHit>> {
        let Some(fts) = fts_query(query, opts.prefix_last) else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT m.id, m.conversation_id, c.profile_id,
                    snippet(messages_fts, 0, ?3, ?4, ?5, ?6), m.created_at, messages_fts.rank
             FROM messages_fts
             JOIN messages m ON m.seq = messages_fts.rowid
             JOIN conversations c ON c.id = m.conversation_id
             WHERE messages_fts MATCH ?1 AND (?2 IS NULL OR c.profile_id = ?2)
             ORDER BY messages_fts.rank, m.created_at DESC
             LIMIT ?7",
        )?;
        let rows = stmt.query_map(
            params![
                fts,
                opts.profile_id,
                opts.open_marker,
                opts.close_marker,
                opts.ellipsis,
                opts.snippet_tokens.clamp(1, 64),
                opts.limit
            ],
            |r| {
                Ok(SearchHit {
                    message_id: r.get(0)?,
                    conversation_id: r.get(1)?,
                    profile_id: r.get(2)?,
                    snippet: r.get(3)?,
                    created_at: r.get(4)?,
                    rank: r.get(5)?,
                })
            },
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::fts_query;

    #[test]
    fn quotes_and_prefixes() {
        assert_eq!(fts_query("", true), None);
        assert_eq!(fts_query("  -- ( ) ", true), None);
        assert_eq!(fts_query("hello", false).as_deref(), Some("\"hello\""));
        assert_eq!(fts_query("say \"hi\" NEAR(x", true).as_deref(), Some("\"say\" \"\"\"hi\"\"\" \"NEAR(x\"*"));
    }
}
