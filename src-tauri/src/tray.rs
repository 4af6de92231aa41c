//! The tray icon as a dashboard: one line per agent with its state, the total of unread messages on the icon (its
//! label/title), in the tooltip and on the dock/taskbar badge where the OS has one, the 5 most recent conversations
//! with unread messages (a click opens one), "Mute notifications for 1 hour", Show and Quit. Refreshed when an agent's
//! state changes, a reply/file/card arrives and a conversation is read. Fails soft (a log line) where no tray host
//! exists.

use tauri::menu::{IsMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Wry};

use crate::hub::{AgentState, AgentStatus, UnreadConversation};

const TRAY_ID: &str = "main-tray";
/// How many conversations with unread messages the menu lists.
pub const RECENT: usize = 5;
const OPEN_PREFIX: &str = "open:";

/// [`install`] on the main thread about a second from now.
pub fn install_soon(app: &AppHandle) {
    let app = app.clone();
    crate::later("hermes-tray-later", std::time::Duration::from_secs(1), move || {
        let handle = app.clone();
        if app.run_on_main_thread(move || install(&handle)).is_err() {
            tracing::warn!("no tray icon: the main thread is gone");
        }
    });
}

pub fn install(app: &AppHandle) {
    let build = || -> tauri::Result<()> {
        let menu = menu(app, &Dashboard::default())?;
        let mut b = TrayIconBuilder::with_id(TRAY_ID).tooltip("Hermes").menu(&menu).on_menu_event(|app, ev| {
            let id = ev.id().as_ref();
            match id {
                "show" => crate::show_main(app),
                "quit" => crate::window::quit(app),
                "mute" => {
                    crate::notify::mute_for_an_hour(app);
                    refresh(app);
                }
                "unmute" => {
                    if let Some(st) = app.try_state::<crate::settings::SettingsState>() {
                        let _ = st.set(crate::settings::AppSettings { mute_until: 0, ..st.get() });
                    }
                    refresh(app);
                }
                _ => {
                    if let Some((profile, conversation)) = id.strip_prefix(OPEN_PREFIX).and_then(|r| r.split_once(':'))
                    {
                        crate::window::open_conversation(app, profile, conversation);
                    }
                }
            }
        });
        if let Some(icon) = app.default_window_icon() {
            b = b.icon(icon.clone());
        }
        b.build(app)?;
        // an engine may have connected before the icon existed
        refresh(app);
        Ok(())
    };
    if let Err(e) = build() {
        tracing::warn!("no tray icon (no system tray here?): {e}");
    }
}

/// What the tray shows.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Dashboard {
    pub agents: Vec<AgentStatus>,
    /// Conversations with unread messages, most recent first (all of them: the total counts them all).
    pub unread: Vec<UnreadConversation>,
    pub muted: bool,
}

impl Dashboard {
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
        match self.total_unread() {
            0 => format!("Hermes — {agents}"),
            n => format!("Hermes — {n} unread · {agents}"),
        }
    }

    /// The text beside the icon (Linux's label, macOS's title): the unread total, nothing when none.
    pub fn title(&self) -> Option<String> {
        let n = self.total_unread();
        (n > 0).then(|| n.to_string())
    }
}

/// `s` on one line, cut to `max` characters.
fn one_line(s: &str, max: usize) -> String {
    let clean: String = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    if clean.chars().count() <= max { clean } else { format!("{}…", clean.chars().take(max - 1).collect::<String>()) }
}

fn menu(app: &AppHandle, d: &Dashboard) -> tauri::Result<Menu<Wry>> {
    let mut items: Vec<Box<dyn IsMenuItem<Wry>>> = Vec::new();
    if d.agents.is_empty() {
        items.push(Box::new(MenuItem::with_id(app, "agent:none", "Hermes — no agent", false, None::<&str>)?));
    }
    for a in &d.agents {
        let id = format!("agent:{}", a.profile_id);
        items.push(Box::new(MenuItem::with_id(app, id, Dashboard::agent_line(a), false, None::<&str>)?));
    }
    items.push(Box::new(PredefinedMenuItem::separator(app)?));
    let total = d.total_unread();
    let head = if total == 0 { "No unread messages".to_string() } else { format!("{total} unread") };
    items.push(Box::new(MenuItem::with_id(app, "unread", head, false, None::<&str>)?));
    for c in d.unread.iter().take(RECENT) {
        let id = format!("{OPEN_PREFIX}{}:{}", c.profile_id, c.conversation_id);
        items.push(Box::new(MenuItem::with_id(app, id, Dashboard::conversation_line(c), true, None::<&str>)?));
    }
    items.push(Box::new(PredefinedMenuItem::separator(app)?));
    if d.muted {
        items.push(Box::new(MenuItem::with_id(app, "unmute", "Notifications muted — unmute", true, None::<&str>)?));
    } else {
        items.push(Box::new(MenuItem::with_id(app, "mute", "Mute notifications for 1 hour", true, None::<&str>)?));
    }
    items.push(Box::new(MenuItem::with_id(app, "show", "Show Hermes", true, None::<&str>)?));
    items.push(Box::new(MenuItem::with_id(app, "quit", "Quit", true, None::<&str>)?));
    let refs: Vec<&dyn IsMenuItem<Wry>> = items.iter().map(|i| i.as_ref()).collect();
    Menu::with_items(app, &refs)
}

/// The dashboard as it stands (the hub's states, the store's unread counts, the settings' mute).
pub fn dashboard(app: &AppHandle) -> Dashboard {
    let muted =
        app.try_state::<crate::settings::SettingsState>().is_some_and(|s| s.get().mute_until > crate::hub::now_ms());
    Dashboard { agents: crate::hub::statuses(app), unread: crate::hub::unread(app), muted }
}

/// Update the tray (menu, label, tooltip) and the badge from the agents' states and the unread counts.
pub fn refresh(app: &AppHandle) {
    let Some(tray) = app.tray_by_id(TRAY_ID) else { return };
    let d = dashboard(app);
    match menu(app, &d) {
        Ok(m) => {
            let _ = tray.set_menu(Some(m));
        }
        Err(e) => tracing::warn!("cannot rebuild the tray menu: {e}"),
    }
    let _ = tray.set_title(d.title().as_deref());
    let _ = tray.set_tooltip(Some(d.tooltip()));
    badge(app, d.total_unread());
}

/// The dock (macOS) or launcher (Linux, where the desktop supports it) badge; Windows has none without an overlay
/// icon, so the taskbar shows nothing there.
fn badge(app: &AppHandle, total: u32) {
    #[cfg(not(windows))]
    if let Some(w) = app.get_webview_window(crate::window::MAIN) {
        let _ = w.set_badge_count((total > 0).then_some(i64::from(total)));
    }
    #[cfg(windows)]
    let _ = (app, total);
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
}
