//! The tray as the desktop's tray host reads it over the session bus: the StatusNotifierItem (libappindicator's,
//! Tauri's tray; ksni's, the resident process) and its com.canonical.dbusmenu menu.

use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The app's connections on this test's session bus (the tray item is one of them).
pub fn bus_names_of(pid: u32) -> Vec<String> {
    let mut pids = super::descendants(pid);
    pids.push(pid);
    super::bus_names_of(&pids)
}

/// Where a tray item serves its StatusNotifierItem and its dbusmenu: libappindicator's (Tauri's tray), then ksni's
/// (the resident process).
pub const TRAY_PATHS: [(&str, &str); 2] = [
    (
        "/org/ayatana/NotificationItem/tray_icon_tray_app_main_tray",
        "/org/ayatana/NotificationItem/tray_icon_tray_app_main_tray/Menu",
    ),
    ("/StatusNotifierItem", "/MenuBar"),
];

/// A tray item on the session bus.
#[derive(Debug, Clone)]
pub struct Tray {
    pub bus: String,
    pub item: &'static str,
    pub menu: &'static str,
}

/// The tray as the desktop's tray host reads it: its menu (StatusNotifierItem + com.canonical.dbusmenu) and where it
/// is served.
///
/// Where it was found last is asked first, alone: the process has other bus names (a zbus connection that answers
/// nothing costs gdbus its whole timeout), and libappindicator unexports the menu for a moment while it replaces it —
/// a scan of every name that lands in that moment took the whole 10 s of a poll (the clean-clone e2e caught it).
pub fn tray(pid: u32) -> Option<(Tray, String)> {
    static FOUND: Mutex<Option<(u32, Tray)>> = Mutex::new(None);
    let layout = |bus: &str, menu_path: &str| {
        let o = Command::new("gdbus")
            .args(["call", "--session", "--timeout", "1", "--dest", bus, "--object-path", menu_path])
            .args(["--method", "com.canonical.dbusmenu.GetLayout", "--", "0", "-1", "[]"])
            .stderr(Stdio::null())
            .output()
            .ok()?;
        let menu = String::from_utf8_lossy(&o.stdout).to_string();
        menu.contains("Show Hermes").then_some(menu)
    };
    let known = FOUND.lock().unwrap().clone().filter(|(p, _)| *p == pid).map(|(_, t)| t);
    if let Some(t) = known {
        // a gap while the menu is replaced: asked again a moment later, not elsewhere
        for _ in 0..5 {
            if let Some(menu) = layout(&t.bus, t.menu) {
                return Some((t, menu));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let found = bus_names_of(pid).into_iter().find_map(|bus| {
        TRAY_PATHS.iter().find_map(|&(item, menu_path)| {
            layout(&bus, menu_path).map(|menu| (Tray { bus: bus.clone(), item, menu: menu_path }, menu))
        })
    });
    if let Some((t, _)) = &found {
        *FOUND.lock().unwrap() = Some((pid, t.clone()));
    }
    found
}

/// The tray's menu once `pred` holds for it (within `secs`).
pub fn tray_menu_when(pid: u32, secs: u64, what: &str, pred: impl Fn(&str) -> bool) -> (Tray, String) {
    let t = Instant::now();
    loop {
        match tray(pid) {
            Some((tray, menu)) if pred(&menu) => return (tray, menu),
            last if t.elapsed() > Duration::from_secs(secs) => {
                panic!("never ({secs} s): {what}; the tray's menu: {:?}", last.map(|(_, m)| m))
            }
            _ => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// A StatusNotifierItem property of the tray, as the tray host reads it.
pub fn sni_property(t: &Tray, name: &str) -> String {
    let o = Command::new("gdbus")
        .args(["call", "--session", "--dest", &t.bus, "--object-path", t.item])
        .args(["--method", "org.freedesktop.DBus.Properties.Get", "org.kde.StatusNotifierItem", name])
        .stderr(Stdio::null())
        .output()
        .expect("gdbus");
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// The label beside the tray icon (the unread total; libappindicator's), as the tray host reads it.
pub fn tray_label(t: &Tray) -> String {
    sni_property(t, "XAyatanaLabel")
}

/// The tray host opening the menu: dbusmenu's `AboutToShow` on its root (hosts ask it before they draw the menu).
pub fn tray_menu_opening(t: &Tray) {
    let ok = Command::new("gdbus")
        .args(["call", "--session", "--dest", &t.bus, "--object-path", t.menu])
        .args(["--method", "com.canonical.dbusmenu.AboutToShow", "0"])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "the tray menu's AboutToShow answered");
}

/// Clicks the tray menu's item labelled `starts` (dbusmenu's `clicked` event, as the tray host sends it).
pub fn tray_click(t: &Tray, menu: &str, starts: &str) {
    let at = menu.find(&format!("'label': <'{starts}")).unwrap_or_else(|| panic!("{starts:?} in the tray: {menu}"));
    let open = menu[..at].rfind('(').expect("the item's opening");
    let id: i32 = menu[open + 1..at].split(',').next().unwrap().trim().parse().expect("the item's id");
    let ok = Command::new("gdbus")
        .args(["call", "--session", "--dest", &t.bus, "--object-path", t.menu])
        .args(["--method", "com.canonical.dbusmenu.Event", &id.to_string(), "clicked", "<0>", "0"])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "the tray item {starts:?} clicked");
}
