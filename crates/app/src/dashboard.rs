//! What the tray and the notifications say, the same in the window process and the resident one: the tray as a
//! dashboard (one line per agent with its state, the unread total, the 5 most recent conversations with unread
//! messages, mute, Show, Quit) and the generic text of a notification. The front ends only draw it: Tauri's tray menu,
//! or the resident's StatusNotifierItem.

use crate::App;
use crate::hub::{AgentState, AgentStatus, Hub, Incoming, UnreadConversation, now_ms};
use crate::settings::AppSettings;

/// How many conversations with unread messages the menu lists.
pub const RECENT: usize = 5;
const OPEN_PREFIX: &str = "open:";

/// What the tray shows.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Dashboard {
    pub agents: Vec<AgentStatus>,
    /// Conversations with unread messages, most recent first (all of them: the total counts them all).
    pub unread: Vec<UnreadConversation>,
    pub muted: bool,
    /// The microphone is open (the window process only: the resident one never records).
    pub listening: Option<Listening>,
}

/// The microphone is open: push-to-talk held, or hands-free on (`lost`: waiting for its device to come back).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Listening {
    pub hands_free: bool,
    pub lost: bool,
}

/// One entry of the tray's menu.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrayItem {
    Separator,
    /// `id` is what [`action`] reads back when it is clicked; a disabled item is a line of text.
    Item {
        id: String,
        label: String,
        enabled: bool,
    },
}

/// What a click on a tray item asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrayAction {
    Show,
    Quit,
    Mute,
    Unmute,
    /// End push-to-talk or hands-free.
    StopListening,
    Open {
        profile_id: String,
        conversation_id: String,
    },
}

/// The action of the item `id` (`None`: a line of text).
pub fn action(id: &str) -> Option<TrayAction> {
    match id {
        "show" => Some(TrayAction::Show),
        "quit" => Some(TrayAction::Quit),
        "mute" => Some(TrayAction::Mute),
        "unmute" => Some(TrayAction::Unmute),
        "stop-listening" => Some(TrayAction::StopListening),
        _ => {
            let (p, c) = id.strip_prefix(OPEN_PREFIX)?.split_once(':')?;
            Some(TrayAction::Open { profile_id: p.to_string(), conversation_id: c.to_string() })
        }
    }
}

impl Dashboard {
    /// The dashboard as it stands: the hub's states, the store's unread counts, the settings' mute.
    pub fn new(app: &App, hub: &Hub, settings: &AppSettings) -> Dashboard {
        Dashboard {
            agents: crate::hub::statuses(app, hub),
            unread: crate::hub::unread(app),
            muted: settings.mute_until > now_ms(),
            listening: None,
        }
    }

    pub fn total_unread(&self) -> u32 {
        self.unread.iter().map(|c| c.unread).sum()
    }

    /// An agent's line: "Lab agent — connected".
    pub fn agent_line(a: &AgentStatus) -> String {
        let state = match a.state {
            AgentState::Connected => "connected",
            AgentState::Connecting => "connecting…",
            AgentState::Offline => "offline",
        };
        format!("{} — {state}", one_line(&a.name, 40))
    }

    /// A conversation's line: "Lab agent: Chat (2)".
    pub fn conversation_line(c: &UnreadConversation) -> String {
        format!("{}: {} ({})", one_line(&c.agent, 24), one_line(&c.title, 32), c.unread)
    }

    /// The icon's tooltip: the unread total and how many agents are connected.
    pub fn tooltip(&self) -> String {
        let connected = self.agents.iter().filter(|a| a.state == AgentState::Connected).count();
        let agents = match self.agents.len() {
            0 => "no agent".to_string(),
            n => format!("{connected} of {n} agents connected"),
        };
        let mic = self.listening_line().map(|l| format!("{l} · ")).unwrap_or_default();
        match self.total_unread() {
            0 => format!("Hermes — {mic}{agents}"),
            n => format!("Hermes — {mic}{n} unread · {agents}"),
        }
    }

    /// What the microphone is doing, when it is open: "Listening (hands-free)".
    pub fn listening_line(&self) -> Option<&'static str> {
        self.listening.map(|l| match l {
            Listening { lost: true, .. } => "Microphone disconnected — waiting for it",
            Listening { hands_free: true, .. } => "Listening (hands-free)",
            Listening { hands_free: false, .. } => "Recording a voice message",
        })
    }

    /// The text beside the icon (Linux's label, macOS's title): the unread total, nothing when none.
    pub fn title(&self) -> Option<String> {
        let n = self.total_unread();
        (n > 0).then(|| n.to_string())
    }

    /// The menu, top to bottom.
    pub fn items(&self) -> Vec<TrayItem> {
        let text = |id: String, label: String| TrayItem::Item { id, label, enabled: false };
        let button = |id: &str, label: &str| TrayItem::Item { id: id.into(), label: label.into(), enabled: true };
        let mut items = Vec::new();
        if let Some(line) = self.listening_line() {
            items.push(text("listening".into(), format!("● {line}")));
            items.push(button("stop-listening", "Stop listening"));
            items.push(TrayItem::Separator);
        }
        if self.agents.is_empty() {
            items.push(text("agent:none".into(), "Hermes — no agent".into()));
        }
        for a in &self.agents {
            items.push(text(format!("agent:{}", a.profile_id), Self::agent_line(a)));
        }
        items.push(TrayItem::Separator);
        let total = self.total_unread();
        let head = if total == 0 { "No unread messages".to_string() } else { format!("{total} unread") };
        items.push(text("unread".into(), head));
        for c in self.unread.iter().take(RECENT) {
            let id = format!("{OPEN_PREFIX}{}:{}", c.profile_id, c.conversation_id);
            items.push(TrayItem::Item { id, label: Self::conversation_line(c), enabled: true });
        }
        items.push(TrayItem::Separator);
        if self.muted {
            items.push(button("unmute", "Notifications muted — unmute"));
        } else {
            items.push(button("mute", "Mute notifications for 1 hour"));
        }
        items.push(button("show", "Show Hermes"));
        items.push(button("quit", "Quit"));
        items
    }
}

/// The tray icon while the microphone is open: `rgba` (`w`×`h`, straight alpha) with a red dot in its lower right
/// corner, ringed in white so it reads on dark and light panels alike.
pub fn listening_icon(rgba: &mut [u8], w: u32, h: u32) {
    let side = w.min(h) as f32;
    let r = side * 0.25;
    let ring = (side * 0.06).max(1.0);
    let (cx, cy) = (w as f32 - r - ring, h as f32 - r - ring);
    for y in 0..h {
        for x in 0..w {
            let d = ((x as f32 + 0.5 - cx).powi(2) + (y as f32 + 0.5 - cy).powi(2)).sqrt();
            let px = match d {
                d if d <= r => [0xe5, 0x3e, 0x3e, 0xff],
                d if d <= r + ring => [0xff, 0xff, 0xff, 0xff],
                _ => continue,
            };
            let i = ((y * w + x) * 4) as usize;
            if let Some(dst) = rgba.get_mut(i..i + 4) {
                dst.copy_from_slice(&px);
            }
        }
    }
}

/// `s` on one line, cut to `max` characters.
pub fn one_line(s: &str, max: usize) -> String {
    let clean: String = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    if clean.chars().count() <= max { clean } else { format!("{}…", clean.chars().take(max - 1).collect::<String>()) }
}

/// A notification says what happened in a few words.
pub const BODY_MAX_CHARS: usize = 120;

/// One line of at most [`BODY_MAX_CHARS`] characters.
pub fn body_line(body: &str) -> String {
    body.chars().filter(|c| !c.is_control()).take(BODY_MAX_CHARS).collect()
}

/// A notification's title: the agent's name on one line (at most 64 characters), "Hermes" when it has none.
pub fn notification_title(agent_name: &str) -> String {
    let t: String = agent_name.chars().filter(|c| !c.is_control()).take(64).collect();
    if t.trim().is_empty() { "Hermes".into() } else { t }
}

/// The generic text of a kind of item in the UI's language (`AppSettings::locale`; the UI's `notify.*` strings).
/// Never what the agent wrote or asks to run.
pub fn generic_text(kind: Incoming, locale: &str) -> &'static str {
    match (kind, locale) {
        (Incoming::Reply, "ru") => "Новый ответ",
        (Incoming::Reply, "zh") => "新回复",
        (Incoming::Reply, _) => "New reply",
        (Incoming::Card, "ru") => "Агенту нужно ваше подтверждение",
        (Incoming::Card, "zh") => "智能体需要你的批准",
        (Incoming::Card, _) => "The agent needs your approval",
    }
}

/// Whether the settings let an item of `kind` raise a notification at `now_ms`.
pub fn allowed(settings: &AppSettings, kind: Incoming, now_ms: i64) -> bool {
    let on = match kind {
        Incoming::Reply => settings.notify_reply,
        Incoming::Card => settings.notify_card,
    };
    on && now_ms >= settings.mute_until
}

/// The settings with every notification muted for an hour from `now_ms` (the tray's item).
pub fn muted_for_an_hour(settings: AppSettings, now_ms: i64) -> AppSettings {
    AppSettings { mute_until: now_ms + 3_600_000, ..settings }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(agent: &str, title: &str, unread: u32) -> UnreadConversation {
        UnreadConversation {
            profile_id: "p".into(),
            conversation_id: "c".into(),
            agent: agent.into(),
            title: title.into(),
            unread,
            updated_at: 0,
        }
    }

    fn labels(d: &Dashboard) -> Vec<String> {
        d.items()
            .into_iter()
            .map(|i| match i {
                TrayItem::Separator => "-".into(),
                TrayItem::Item { label, enabled, .. } => format!("{}{label}", if enabled { "" } else { "~" }),
            })
            .collect()
    }

    #[test]
    fn the_dashboard_counts_every_unread_message_and_names_every_agent() {
        let agent = |name: &str, state| AgentStatus { profile_id: name.into(), name: name.into(), state, since_ms: 0 };
        let mut d = Dashboard {
            agents: vec![agent("Lab", AgentState::Connected), agent("Home", AgentState::Offline)],
            ..Dashboard::default()
        };
        assert_eq!(d.title(), None);
        assert_eq!(d.tooltip(), "Hermes — 1 of 2 agents connected");
        assert_eq!(Dashboard::agent_line(&d.agents[1]), "Home — offline");
        d.unread = vec![conv("Lab", "Chat", 2), conv("Home", "Plans\nnext", 1)];
        assert_eq!(d.title().as_deref(), Some("3"));
        assert_eq!(d.tooltip(), "Hermes — 3 unread · 1 of 2 agents connected");
        assert_eq!(Dashboard::conversation_line(&d.unread[1]), "Home: Plans next (1)");
        assert_eq!(one_line(&"x".repeat(50), 10).chars().count(), 10);
    }

    #[test]
    fn the_menu_lists_agents_then_at_most_five_unread_conversations_then_the_actions() {
        let mut d = Dashboard::default();
        assert_eq!(
            labels(&d),
            [
                "~Hermes — no agent",
                "-",
                "~No unread messages",
                "-",
                "Mute notifications for 1 hour",
                "Show Hermes",
                "Quit"
            ]
        );
        d.agents = vec![AgentStatus {
            profile_id: "p1".into(),
            name: "Lab".into(),
            state: AgentState::Connected,
            since_ms: 1,
        }];
        d.unread = (0..7).map(|i| conv("Lab", &format!("Chat {i}"), 1)).collect();
        d.muted = true;
        let l = labels(&d);
        assert_eq!(l[0], "~Lab — connected");
        assert_eq!(l[2], "~7 unread", "the total counts every conversation");
        assert_eq!(l.iter().filter(|x| x.starts_with("Lab: Chat")).count(), RECENT);
        assert!(l.contains(&"Notifications muted — unmute".to_string()));
        // every clickable item reads back as its action; a line of text as none
        for item in d.items() {
            if let TrayItem::Item { id, enabled, .. } = item {
                assert_eq!(action(&id).is_some(), enabled, "{id}");
            }
        }
        assert_eq!(
            action("open:p1:c9"),
            Some(TrayAction::Open { profile_id: "p1".into(), conversation_id: "c9".into() })
        );
        assert_eq!(action("open:nothing"), None);
    }

    #[test]
    fn an_open_microphone_tops_the_menu_with_a_way_to_stop_it() {
        let mut d = Dashboard { listening: Some(Listening { hands_free: true, lost: false }), ..Dashboard::default() };
        let l = labels(&d);
        assert_eq!(l[..3], ["~● Listening (hands-free)", "Stop listening", "-"]);
        assert_eq!(action("stop-listening"), Some(TrayAction::StopListening));
        assert_eq!(d.tooltip(), "Hermes — Listening (hands-free) · no agent");
        d.listening = Some(Listening { hands_free: true, lost: true });
        assert_eq!(labels(&d)[0], "~● Microphone disconnected — waiting for it");
        d.listening = Some(Listening { hands_free: false, lost: false });
        assert_eq!(labels(&d)[0], "~● Recording a voice message");
        d.listening = None;
        assert_eq!(labels(&d)[0], "~Hermes — no agent", "nothing about the microphone when it is closed");
    }

    #[test]
    fn the_listening_icon_has_a_ringed_red_dot_in_its_corner_and_keeps_the_rest() {
        let (w, h) = (32u32, 32u32);
        let mut px: Vec<u8> = (0..w * h).flat_map(|_| [10, 20, 30, 255]).collect();
        listening_icon(&mut px, w, h);
        let at = |x: u32, y: u32| px[((y * w + x) * 4) as usize..][..4].to_vec();
        assert_eq!(at(2, 2), [10, 20, 30, 255], "the top left is the app's icon");
        assert_eq!(at(23, 23), [0xe5, 0x3e, 0x3e, 0xff], "the dot");
        let ring = (0..w).map(|x| at(x, 23)).filter(|p| p == &[255, 255, 255, 255]).count();
        assert!(ring >= 2, "a white ring around it");
        // a buffer shorter than w×h does not panic
        listening_icon(&mut [0; 10], 32, 32);
    }

    #[test]
    fn notifications_are_generic_and_follow_the_settings() {
        assert_eq!(body_line("Новый ответ"), "Новый ответ");
        assert_eq!(body_line("a\nb\u{1b}[31mc"), "ab[31mc", "one line, no control characters");
        assert_eq!(body_line(&"x".repeat(500)).chars().count(), BODY_MAX_CHARS);
        assert_eq!(notification_title("Lab\nagent"), "Labagent");
        assert_eq!(notification_title(" "), "Hermes");
        assert_eq!(generic_text(Incoming::Reply, "en"), "New reply");
        assert_eq!(generic_text(Incoming::Card, "ru"), "Агенту нужно ваше подтверждение");
        assert_eq!(generic_text(Incoming::Reply, "xx"), "New reply", "an unknown language falls back to English");

        let s = AppSettings::default();
        assert!(allowed(&s, Incoming::Reply, 1000) && allowed(&s, Incoming::Card, 1000), "on by default");
        let no_cards = AppSettings { notify_card: false, ..AppSettings::default() };
        assert!(allowed(&no_cards, Incoming::Reply, 1000) && !allowed(&no_cards, Incoming::Card, 1000));
        let muted = muted_for_an_hour(AppSettings::default(), 1000);
        assert!(!allowed(&muted, Incoming::Reply, 3_600_999) && !allowed(&muted, Incoming::Card, 2000));
        assert!(allowed(&muted, Incoming::Reply, 3_601_000), "the mute ends");
    }
}
