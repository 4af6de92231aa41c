//! What xcap does not say about an X11 window: whether it is on the screen now. A window on another workspace stays
//! in the window manager's list, not minimized, at its usual position, but unmapped (its frame is): capturing it
//! fails. Also used under XWayland.

use xcb::{XidNew, x};

/// One connection for a round of questions (xcap opens one per property).
pub(crate) struct Screen {
    conn: xcb::Connection,
}

impl Screen {
    /// `None` without an X server (then nothing is filtered on this ground).
    pub(crate) fn open() -> Option<Screen> {
        xcb::Connection::connect(None).ok().map(|(conn, _)| Screen { conn })
    }

    /// Whether window `id` and all its ancestors are mapped; `None` when X cannot say (no such window).
    pub(crate) fn viewable(&self, id: u32) -> Option<bool> {
        let cookie = self.conn.send_request(&x::GetWindowAttributes { window: x::Window::new(id) });
        let reply = self.conn.wait_for_reply(cookie).ok()?;
        Some(reply.map_state() == x::MapState::Viewable)
    }
}
