//! Export of a conversation to Markdown and JSON.

use std::fmt::Write as _;

use crate::{ConversationExport, Direction, MediaEntry, Result, Store, now_ms};

/// Version of the JSON export format.
pub const EXPORT_FORMAT: u32 = 1;

impl Store {
    /// The conversation with all its messages (oldest first) and referenced media entries.
    /// `NotFound` if the conversation does not exist.
    pub fn export_json(&self, conversation_id: &str) -> Result<ConversationExport> {
        let conversation = self.conversation_require(conversation_id)?;
        let profile = self.profile_require(&conversation.profile_id)?;
        let messages = self.messages_all(conversation_id)?;
        let mut media = Vec::new();
        for id in messages.iter().flat_map(|m| &m.attachments) {
            if media.iter().any(|e: &MediaEntry| &e.id == id) {
                continue;
            }
            if let Some(entry) = self.media_get(id)? {
                media.push(entry);
            }
        }
        Ok(ConversationExport {
            format: EXPORT_FORMAT,
            exported_at: now_ms(),
            profile_name: profile.name,
            conversation,
            messages,
            media,
        })
    }

    /// The conversation as Markdown: title, then each message with its UTC time and sender
    /// ("You" or the profile's name), its text, errors and attachments.
    pub fn export_markdown(&self, conversation_id: &str) -> Result<String> {
        let ex = self.export_json(conversation_id)?;
        Ok(render_markdown(&ex))
    }
}

/// Renders an export as Markdown.
pub fn render_markdown(ex: &ConversationExport) -> String {
    let mut out = String::new();
    // `write!` into a String cannot fail; the results are ignored deliberately.
    let _ = writeln!(out, "# {}\n", one_line(&ex.conversation.title));
    let _ = writeln!(
        out,
        "_Conversation with {} — exported {} — {} messages_\n",
        one_line(&ex.profile_name),
        format_utc(ex.exported_at),
        ex.messages.len()
    );
    for m in &ex.messages {
        let sender = match m.direction {
            Direction::Up => "You",
            Direction::Down => ex.profile_name.as_str(),
        };
        let _ = writeln!(out, "---\n\n**{}** · {}\n", one_line(sender), format_utc(m.created_at));
        if !m.text.is_empty() {
            let _ = writeln!(out, "{}\n", m.text.trim_end());
        }
        if let Some(e) = &m.error {
            let _ = writeln!(out, "> ⚠ error `{}`: {}\n", e.code, one_line(&e.text));
        }
        if !m.attachments.is_empty() {
            let _ = writeln!(out, "Attachments:");
            for id in &m.attachments {
                match ex.media.iter().find(|e| &e.id == id) {
                    Some(e) => {
                        let name = e.filename.as_deref().unwrap_or(&e.path);
                        let _ =
                            writeln!(out, "- {} ({}, {} bytes) — `media/{}`", one_line(name), e.mime, e.size, e.path);
                    }
                    None => {
                        let _ = writeln!(out, "- (missing media {id})");
                    }
                }
            }
            out.push('\n');
        }
    }
    out
}

fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

/// `YYYY-MM-DD HH:MM:SS UTC` for milliseconds since the epoch (proleptic Gregorian).
pub fn format_utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC", sod / 3600, (sod % 3600) / 60, sod % 60)
}

/// Howard Hinnant's days-to-civil algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::format_utc;

    #[test]
    fn utc_formatting() {
        assert_eq!(format_utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(format_utc(951_782_400_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(format_utc(1_700_000_000_123), "2023-11-14 22:13:20 UTC");
        assert_eq!(format_utc(-1000), "1969-12-31 23:59:59 UTC");
    }
}
