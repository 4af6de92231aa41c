//! The tray: a StatusNotifierItem with its com.canonical.dbusmenu menu (ksni, over the session D-Bus), drawing the
//! dashboard the window process's tray draws (`hermes_app::dashboard`): the icon with the unread total on it (a
//! StatusNotifierItem has no label beside its icon), "Hermes" as its title, the tooltip with the unread total and the
//! agents connected, the menu's lines and entries. A click on an entry sends its id to
//! the resident. The item is served at `/StatusNotifierItem` and its menu at `/MenuBar`, on a bus name of its own
//! (`org.kde.StatusNotifierItem-<pid>-<n>`). No tray host yet (a login start before the desktop is up): the item
//! registers when one appears; no session bus: no tray, a log line.

use hermes_app::dashboard::{Dashboard, TrayItem};
use ksni::TrayMethods as _;
use tokio::sync::{mpsc, watch};

use crate::icon::Pixmap;
use crate::resident::TrayView;

/// The item's id (StatusNotifierItem `Id`).
pub const ID: &str = "hermes-desktop";
/// The item's title (StatusNotifierItem `Title`): the app's name.
pub const TITLE: &str = "Hermes";

/// What the StatusNotifierItem serves.
pub struct HermesTray {
    dashboard: Dashboard,
    icons: Vec<Pixmap>,
    clicks: mpsc::UnboundedSender<String>,
}

impl HermesTray {
    pub fn new(icons: Vec<Pixmap>, clicks: mpsc::UnboundedSender<String>) -> HermesTray {
        HermesTray { dashboard: Dashboard::default(), icons, clicks }
    }
}

impl ksni::Tray for HermesTray {
    // a click on the icon opens the menu, as the window process's tray (libappindicator) does
    const MENU_ON_ACTIVATE: bool = true;

    fn id(&self) -> String {
        ID.into()
    }

    fn title(&self) -> String {
        TITLE.into()
    }

    /// The app's icon, with the unread total on it (see [`crate::icon::badged`]).
    fn icon_pixmap(&self) -> Vec<ksni::Icon> {
        let total = self.dashboard.total_unread();
        self.icons
            .iter()
            .filter_map(|p| {
                let (width, height) = (i32::try_from(p.width).ok()?, i32::try_from(p.height).ok()?);
                Some(ksni::Icon { width, height, data: crate::icon::badged(p, total).argb })
            })
            .collect()
    }

    fn tool_tip(&self) -> ksni::ToolTip {
        ksni::ToolTip { title: self.dashboard.tooltip(), ..ksni::ToolTip::default() }
    }

    fn menu(&self) -> Vec<ksni::MenuItem<Self>> {
        self.dashboard
            .items()
            .into_iter()
            .map(|item| match item {
                TrayItem::Separator => ksni::MenuItem::Separator,
                TrayItem::Item { id, label, enabled } => ksni::menu::StandardItem {
                    label,
                    enabled,
                    activate: Box::new(move |t: &mut HermesTray| {
                        let _ = t.clicks.send(id.clone());
                    }),
                    ..ksni::menu::StandardItem::default()
                }
                .into(),
            })
            .collect()
    }

    /// The host opens the menu (dbusmenu `AboutToShow` on the root: hosts ask before they draw it): the resident reads
    /// the window process's files ahead while the user chooses.
    fn menu_about_to_show(&mut self) {
        let _ = self.clicks.send(crate::resident::MENU_OPENED.into());
    }

    fn watcher_offline(&self, reason: ksni::OfflineReason) -> bool {
        tracing::info!("the tray host went away ({reason:?}): the item waits for the next one");
        true
    }
}

/// The running tray as the resident sees it: the newest dashboard goes to the item (older ones not yet drawn are
/// skipped).
pub struct Sni {
    tx: watch::Sender<Dashboard>,
    served: tokio::task::JoinHandle<()>,
}

impl TrayView for Sni {
    fn show(&self, dashboard: &Dashboard) {
        self.tx.send_replace(dashboard.clone());
    }

    /// The sender dropped: the service task shuts ksni's service down (its pending replies sent) and ends.
    fn close(self: Box<Self>) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>> {
        let Sni { tx, served } = *self;
        drop(tx);
        Box::pin(async move {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), served).await;
        })
    }
}

/// Serves the tray on the session bus; `None` (a log line) where there is no session bus.
pub async fn start(clicks: mpsc::UnboundedSender<String>) -> Option<Sni> {
    let tray = HermesTray::new(crate::icon::app_icons(), clicks);
    let handle = match tray.assume_sni_available(true).spawn().await {
        Ok(h) => h,
        Err(e) => {
            tracing::warn!("no tray icon: {e}");
            return None;
        }
    };
    let (tx, mut rx) = watch::channel(Dashboard::default());
    let served = tokio::spawn(async move {
        while rx.changed().await.is_ok() {
            let dashboard = rx.borrow_and_update().clone();
            if handle.update(|t| t.dashboard = dashboard).await.is_none() {
                tracing::warn!("the tray service has stopped");
                return;
            }
        }
        handle.shutdown().await;
    });
    Some(Sni { tx, served })
}
