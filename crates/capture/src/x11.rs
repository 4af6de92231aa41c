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

    /// The window manager's `_NET_ACTIVE_WINDOW` (the window with the keyboard focus): one round trip for the atom,
    /// one for the property. `None` without a window manager or with nothing active.
    pub(crate) fn active_window(&self) -> Option<u32> {
        let atom = self.conn.send_request(&x::InternAtom { only_if_exists: true, name: b"_NET_ACTIVE_WINDOW" });
        let atom = self.conn.wait_for_reply(atom).ok()?.atom();
        if atom == x::ATOM_NONE {
            return None;
        }
        let root = self.conn.get_setup().roots().next()?.root();
        let cookie = self.conn.send_request(&x::GetProperty {
            delete: false,
            window: root,
            property: atom,
            r#type: x::ATOM_WINDOW,
            long_offset: 0,
            long_length: 1,
        });
        let reply = self.conn.wait_for_reply(cookie).ok()?;
        let id = *reply.value::<u32>().first()?;
        (id != 0).then_some(id)
    }

    /// Whether window `id` and all its ancestors are mapped; `None` when X cannot say (no such window).
    pub(crate) fn viewable(&self, id: u32) -> Option<bool> {
        let cookie = self.conn.send_request(&x::GetWindowAttributes { window: x::Window::new(id) });
        let reply = self.conn.wait_for_reply(cookie).ok()?;
        Some(reply.map_state() == x::MapState::Viewable)
    }
}
