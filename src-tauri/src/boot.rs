//! The start-up snapshot: what the page asks for first, handed to it with the window.
//!
//! At launch the page needs the profiles, their conversations and the first conversation's newest messages before it
//! can show anything; asked over IPC, each answer waited behind the page's own first render (~60–70 ms of the launch,
//! bench marks). The shell reads the same answers from the store just before it creates the main window (the same
//! functions as the commands, so the same data and the same `next` cursor) and gives them to the page as an
//! initialization script — main frame only, run before the page's own scripts — as a JSON string (`JSON.parse`, every
//! byte escaped by serde_json: the history is agent output). The UI's Tauri backend answers its first
//! `list_profiles` / `list_conversations` / `history` calls from it once, and ignores a snapshot more than a few
//! seconds older than the page (a reload later in the session asks the shell as usual).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::commands::profiles::profiles_of;
use crate::ipc::{Conversation, HistoryPage, Profile};
use crate::state::AppState;

/// The page the UI asks for first (`HISTORY_PAGE` in ui/src/lib/state/chat.svelte.ts); the UI uses the snapshot's
/// page only when its own request matches this limit.
pub const FIRST_PAGE: u32 = 50;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Boot {
    /// When this was read (Unix ms): the page compares it with its own navigation start.
    pub created_ms: f64,
    pub profiles: Vec<Profile>,
    /// Conversations by profile id.
    pub conversations: BTreeMap<String, Vec<Conversation>>,
    /// The newest messages of the conversation the UI opens first (its first profile's first conversation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<BootHistory>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BootHistory {
    pub conversation_id: String,
    pub limit: u32,
    pub page: HistoryPage,
}

/// Read the snapshot; `None` if the store cannot answer (the page then asks over IPC, and gets the error there).
pub fn snapshot(state: &AppState) -> Option<Boot> {
    let profiles = profiles_of(state).ok()?;
    let mut conversations = BTreeMap::new();
    for p in &profiles {
        conversations.insert(p.id.clone(), state.app.conversations(&p.id).ok()?);
    }
    let first = profiles.first().and_then(|p| conversations.get(&p.id)).and_then(|c| c.first());
    let history = match first {
        Some(c) => Some(BootHistory {
            conversation_id: c.id.clone(),
            limit: FIRST_PAGE,
            page: crate::grants::history_for_page(state.app.history(&c.id, None, FIRST_PAGE).ok()?),
        }),
        None => None,
    };
    let created_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0);
    Some(Boot { created_ms, profiles, conversations, history })
}

/// The initialization script that hands `boot` to the page: a JSON text inside a JSON string literal.
pub fn script(boot: &Boot) -> Option<String> {
    let json = serde_json::to_string(boot).ok()?;
    // (U+2028/2029 are legal in a string literal since ES2019; escaped anyway, for any older engine)
    let literal = serde_json::to_string(&json).ok()?.replace('\u{2028}', "\\u2028").replace('\u{2029}', "\\u2029");
    Some(format!("window.__HERMES_BOOT__ = JSON.parse({literal});"))
}

/// Facts about this machine the page needs before its first render, whatever the page's age (a reload too):
/// `window.__HERMES_HOST__`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Host {
    /// Linux: the font CSS `system-ui` names is not installed; the page leaves it out of its stacks (fonts.rs).
    pub ui_font_missing: bool,
    /// The local time zone as `[from, offset]` pairs: from the instant `from` (ms since the epoch, ascending; the first
    /// is the earliest a JavaScript `Date` can hold) the wall clock is `offset` seconds ahead of UTC. The page
    /// tells the time from these (ui/src/lib/util/localtime.ts) rather than from `Date`'s local-time methods: in
    /// WebKit, the first of those loads ICU's time zone and calendar data, ~1.5 MB of the web process for as long as it
    /// runs (the memory bench, bench/README.md).
    pub utc_offsets: Vec<[i64; 2]>,
    /// Linux: how long after the last input the shell stops the text caret's blinking (caret.rs), in ms; the page then
    /// shows the caret again where it rests (ui/src/lib/util/caret.ts). `None` where carets do not blink or elsewhere.
    pub caret_rest_ms: Option<u64>,
}

impl Host {
    /// What the shell found at start (fonts.rs), and the system's time zone now.
    pub fn current() -> Host {
        Host {
            ui_font_missing: crate::fonts::remembered(),
            utc_offsets: utc_offsets(&jiff::tz::TimeZone::system(), jiff::Timestamp::now()),
            #[cfg(target_os = "linux")]
            caret_rest_ms: crate::caret::rest_ms(),
            #[cfg(not(target_os = "linux"))]
            caret_rest_ms: None,
        }
    }
}

/// The earliest instant a JavaScript `Date` holds (−8.64e15 ms): where the first offset of [`utc_offsets`] starts.
const JS_DATE_MIN_MS: i64 = -8_640_000_000_000_000;

/// `tz`'s offsets from 40 years before `now` to 2 years after it (a chat's timestamps, and the next midnights):
/// the offset in effect at the start, then one pair per change. Zones without daylight saving time give one pair.
pub fn utc_offsets(tz: &jiff::tz::TimeZone, now: jiff::Timestamp) -> Vec<[i64; 2]> {
    const YEAR_S: i64 = 365 * 86_400;
    let start = jiff::Timestamp::from_second(now.as_second() - 40 * YEAR_S).unwrap_or(jiff::Timestamp::MIN);
    let end = now.as_second().saturating_add(2 * YEAR_S);
    let mut out = vec![[JS_DATE_MIN_MS, i64::from(tz.to_offset(start).seconds())]];
    for t in tz.following(start).take_while(|t| t.timestamp().as_second() <= end) {
        let offset = i64::from(t.offset().seconds());
        if out.last().map(|l| l[1]) != Some(offset) {
            out.push([t.timestamp().as_millisecond(), offset]);
        }
    }
    out
}

/// The initialization script that hands `host` to the page.
pub fn host_script(host: &Host) -> Option<String> {
    Some(format!("window.__HERMES_HOST__ = {};", serde_json::to_string(host).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipc::KeychainInfo;

    fn state() -> (tempfile::TempDir, AppState) {
        let dir = tempfile::tempdir().unwrap();
        let store = hermes_store::Store::open_in(dir.path()).unwrap();
        let keychain = crate::state::Keychain::known(KeychainInfo { available: false, detail: None });
        let st = AppState::new(store, dir.path().to_path_buf(), dir.path().join("logs"), keychain);
        (dir, st)
    }

    /// The script's payload, as the page's `JSON.parse` sees it.
    fn payload(script: &str) -> serde_json::Value {
        let literal = script.strip_prefix("window.__HERMES_BOOT__ = JSON.parse(").unwrap().strip_suffix(");").unwrap();
        let json: String = serde_json::from_str(literal).unwrap();
        serde_json::from_str(&json).unwrap()
    }

    #[test]
    fn the_snapshot_is_what_the_commands_answer_and_hostile_text_stays_data() {
        let (_dir, st) = state();
        let evil = "</script><script>alert(1)</script> \" ' ` ${x} \\ \u{2028}\u{2029} 🙂";
        let (pid, cid) = st
            .with_store(|s| {
                let p = s.profile_create(&hermes_store::NewProfile {
                    name: evil.into(),
                    url: "ws://127.0.0.1:8787/ws".into(),
                    dialect: hermes_store::Dialect::Adapter,
                    v3_user_id: None,
                    allow_insecure_ws: false,
                    avatar_url: None,
                })?;
                let c = s.conversation_for_adapter(&p.id)?;
                for i in 0..60 {
                    let m = hermes_store::Message::new(
                        &c.id,
                        hermes_store::Direction::Down,
                        &format!("{evil} {i}"),
                        1_700_000_000_000 + i * 1000,
                    );
                    s.message_upsert(&m)?;
                }
                Ok((p.id, c.id))
            })
            .unwrap();
        st.with_store(|s| s.draft_set(&cid, &format!("{evil} draft"))).unwrap();
        let boot = snapshot(&st).expect("a snapshot");
        let script = script(&boot).unwrap();
        // one statement on one line: no raw newline or line separator in it (the payload is a string literal)
        assert!(!script.contains('\n') && !script.contains('\u{2028}') && !script.contains('\u{2029}'));
        let v = payload(&script);
        assert_eq!(v["profiles"][0]["name"], evil);
        assert_eq!(v["profiles"][0]["id"], pid.as_str());
        assert_eq!(v["conversations"][&pid][0]["id"], cid.as_str());
        // the conversation's draft comes with it (the sidebar shows it), as data
        assert_eq!(v["conversations"][&pid][0]["draft"], format!("{evil} draft"));
        assert_eq!(v["history"]["conversationId"], cid.as_str());
        assert_eq!(v["history"]["limit"], FIRST_PAGE);
        let msgs = v["history"]["page"]["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), FIRST_PAGE as usize);
        assert!(v["history"]["page"]["next"].is_string(), "an older page follows");
        // the same as the command's answer
        let page = st.app.history(&cid, None, FIRST_PAGE).unwrap();
        assert_eq!(serde_json::to_value(&page).unwrap(), v["history"]["page"]);
        assert!(msgs.iter().any(|m| m["text"] == format!("{evil} 59")));
    }

    #[test]
    fn no_profile_no_history() {
        let (_dir, st) = state();
        let boot = snapshot(&st).unwrap();
        let v = payload(&script(&boot).unwrap());
        assert_eq!(v["profiles"], serde_json::json!([]));
        assert!(v.get("history").is_none());
        assert!(v["createdMs"].as_f64().unwrap() > 1.7e12);
    }

    #[test]
    fn the_host_script_carries_the_font_fact_the_time_zone_and_the_caret_rest() {
        let js = |missing, caret_rest_ms| {
            host_script(&Host { ui_font_missing: missing, utc_offsets: vec![[JS_DATE_MIN_MS, 3600]], caret_rest_ms })
        };
        assert_eq!(
            js(true, Some(11_100)).unwrap(),
            r#"window.__HERMES_HOST__ = {"uiFontMissing":true,"utcOffsets":[[-8640000000000000,3600]],"caretRestMs":11100};"#
        );
        assert_eq!(
            js(false, None).unwrap(),
            r#"window.__HERMES_HOST__ = {"uiFontMissing":false,"utcOffsets":[[-8640000000000000,3600]],"caretRestMs":null};"#
        );
    }

    fn at(s: &str) -> jiff::Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn utc_offsets_follow_daylight_saving_time() {
        let tz = jiff::tz::TimeZone::get("America/New_York").unwrap();
        let now = at("2026-12-01T12:00:00Z");
        let table = utc_offsets(&tz, now);
        // the offset in effect at any instant of the span is the table's (the page's lookup: the last `from` ≤ t)
        let lookup = |ms: i64| table.iter().rev().find(|p| p[0] <= ms).unwrap()[1];
        let mut t = at("1987-01-01T00:00:00Z");
        while t < at("2028-11-30T00:00:00Z") {
            assert_eq!(lookup(t.as_millisecond()), i64::from(tz.to_offset(t).seconds()), "at {t}");
            t = t.checked_add(jiff::SignedDuration::from_mins(97)).unwrap();
        }
        // two changes a year, exactly at the transitions: 2026-03-08 07:00 UTC (EDT) and 2026-11-01 06:00 UTC (EST)
        assert!(table.contains(&[at("2026-03-08T07:00:00Z").as_millisecond(), -4 * 3600]));
        assert!(table.contains(&[at("2026-11-01T06:00:00Z").as_millisecond(), -5 * 3600]));
        assert!((75..90).contains(&table.len()), "{} pairs", table.len());
        assert!(table.windows(2).all(|w| w[0][0] < w[1][0] && w[0][1] != w[1][1]));
    }

    #[test]
    fn a_zone_without_daylight_saving_time_is_one_offset() {
        let now = at("2026-12-01T12:00:00Z");
        assert_eq!(utc_offsets(&jiff::tz::TimeZone::UTC, now), vec![[JS_DATE_MIN_MS, 0]]);
        let kolkata = jiff::tz::TimeZone::get("Asia/Kolkata").unwrap();
        assert_eq!(utc_offsets(&kolkata, now), vec![[JS_DATE_MIN_MS, 19_800]]);
    }
}
