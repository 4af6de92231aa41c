//! The Quick Ask panel's type-ahead (Linux). A panel built for a press (from the tray: a new window process) goes on
//! screen as soon as its window exists, ~200 ms before its page has loaded: it takes the keyboard focus at once, so
//! no key meant for it lands in the app behind. Until the page says it is ready, the window holds the key events it
//! gets (WebKit would hand them to a page still loading, which drops them); then it puts them back into GTK's event
//! queue in the order they came, ahead of any key typed after, and WebKit delivers them to the page's focused
//! composer as if they had just been typed — text, Backspace, Enter (send), an input method's keys alike. Escape
//! closes the panel at once and forgets what was held.

/// Key events held until the page is ready (press and release alike, so they are replayed in pairs).
#[derive(Debug)]
pub struct Held<E> {
    events: Option<Vec<E>>,
}

impl<E> Default for Held<E> {
    fn default() -> Self {
        Held { events: None }
    }
}

/// At most this many events are held: a key held down (auto-repeat) must not grow the buffer without end.
pub const MAX_HELD: usize = 2_000;

impl<E> Held<E> {
    /// Starts holding (a panel is on screen before its page).
    pub fn start(&mut self) {
        self.events = Some(Vec::new());
    }

    /// Whether keys are held now.
    pub fn holding(&self) -> bool {
        self.events.is_some()
    }

    /// Holds one event; `false` when not holding (the event goes on to the page).
    pub fn hold(&mut self, e: E) -> bool {
        match self.events.as_mut() {
            Some(v) => {
                if v.len() < MAX_HELD {
                    v.push(e);
                }
                true
            }
            None => false,
        }
    }

    /// Stops holding; the events held, oldest first, to be put back.
    pub fn release(&mut self) -> Vec<E> {
        self.events.take().unwrap_or_default()
    }
}

#[cfg(target_os = "linux")]
mod gtk_side {
    use std::cell::RefCell;

    use gtk::gdk;
    use gtk::glib::Propagation;
    use gtk::prelude::WidgetExt;

    use super::Held;

    thread_local! {
        // GTK's objects live on its main thread: so do the held events
        static HELD: RefCell<Held<gdk::Event>> = RefCell::new(Held::default());
    }

    /// The panel's window holds its key events from now until [`release`] (main thread).
    pub fn hold_keys(app: &tauri::AppHandle, w: &tauri::WebviewWindow) {
        let Ok(gw) = w.gtk_window() else { return };
        HELD.with(|h| h.borrow_mut().start());
        let handle = app.clone();
        gw.connect_key_press_event(move |_, ev| {
            if !HELD.with(|h| h.borrow().holding()) {
                return Propagation::Proceed;
            }
            if ev.keyval() == gdk::keys::constants::Escape {
                HELD.with(|h| h.borrow_mut().release());
                crate::quick::hide(&handle);
                return Propagation::Stop;
            }
            hold(ev)
        });
        gw.connect_key_release_event(|_, ev| hold(ev));
    }

    fn hold(ev: &gdk::EventKey) -> Propagation {
        let event: &gdk::Event = ev;
        if HELD.with(|h| h.borrow_mut().hold(event.clone())) { Propagation::Stop } else { Propagation::Proceed }
    }

    /// The page is ready: the held events go back into GTK's queue, in order, ahead of anything typed after (main
    /// thread). Returns how many.
    pub fn release() -> usize {
        let events = HELD.with(|h| h.borrow_mut().release());
        for e in &events {
            e.put();
        }
        events.len()
    }

    /// The panel closed before its page was ready: what was held is forgotten (main thread).
    pub fn forget() {
        HELD.with(|h| h.borrow_mut().release());
    }
}

#[cfg(target_os = "linux")]
pub use gtk_side::{forget, hold_keys, release};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_only_between_start_and_release_and_gives_back_in_order() {
        let mut h = Held::default();
        assert!(!h.hold(1), "not started: the page gets its keys");
        h.start();
        assert!(h.holding());
        for e in [2, 3, 4] {
            assert!(h.hold(e));
        }
        assert_eq!(h.release(), vec![2, 3, 4], "oldest first");
        assert!(!h.holding());
        assert!(!h.hold(5), "released: keys go on to the page");
        assert_eq!(h.release(), Vec::<i32>::new());
    }

    #[test]
    fn a_held_down_key_stops_at_the_limit() {
        let mut h = Held::default();
        h.start();
        for e in 0..MAX_HELD + 50 {
            assert!(h.hold(e), "held (or dropped) while holding: never passed to a page that is not ready");
        }
        let back = h.release();
        assert_eq!(back.len(), MAX_HELD);
        assert_eq!(back.last(), Some(&(MAX_HELD - 1)), "the first ones are kept");
    }
}
