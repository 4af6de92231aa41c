//! The text caret stops blinking after a while without input (Linux), as GTK's own text fields do
//! (`gtk-cursor-blink-timeout`, 10 s unless the user set another), and blinks again at the next key press, click or
//! focus. WebKit blinks a focused field's caret for as long as it has the focus, and each blink is a repaint with
//! WebKit's vblank thread running: measured, the composer's caret was ~0.5 % of a core of the visible, idle window's
//! ~1.1 % on this machine's software rendering (bench/README.md). WebKit follows GtkSettings' `gtk-cursor-blink` at run
//! time, so the setting is turned off and on here; a user whose carets never blink is left alone.
//!
//! WebKit stops the caret where it is in its blink when the setting goes off, so the moment is chosen in the blink's
//! "on" half: WebKit starts each blink cycle (caret on for half of `gtk-cursor-blink-time`, off for the other half)
//! when the caret moves or the field gets the focus — at a key press, a click, the focus, the input watched here — so
//! the rest comes a whole number of cycles after the last input, plus a quarter cycle. WebKit takes the new setting a
//! blink or two later, though (seen: 1.8 s), and may stop in the "off" half then: so the page, told the delay in its
//! host facts (`caretRestMs`), gives its focused field the focus again a few seconds after the rest, which shows the
//! caret, solid (ui/src/lib/util/caret.ts).

use std::cell::RefCell;
use std::time::{Duration, Instant};

use gtk::glib;
use gtk::glib::Propagation;
use gtk::prelude::{GtkSettingsExt, WidgetExt};

/// The blinking's state, on GTK's main thread.
#[derive(Default)]
struct Blink {
    /// How long after the last input the caret rests: the user's `gtk-cursor-blink-timeout` rounded up to whole blink
    /// cycles, plus a quarter cycle ([`rest_after`]); `None` until the first window is watched, or when carets never
    /// blink.
    timeout: Option<Duration>,
    last_input: Option<Instant>,
    /// A timer is pending (one at a time, moved on by input).
    timer: bool,
    /// Blinking was turned off here (and is turned back on at the next input).
    stopped: bool,
}

thread_local! {
    static BLINK: RefCell<Blink> = RefCell::new(Blink::default());
}

/// How long after the last input the caret rests, in ms (`None`: the user's carets do not blink, or GTK is not
/// running on this thread). Read once, from the user's GTK settings, on GTK's main thread.
pub fn rest_ms() -> Option<u64> {
    if !gtk::is_initialized_main_thread() {
        return None;
    }
    if BLINK.with(|b| b.borrow().timeout.is_none()) {
        let settings = gtk::Settings::default()?;
        if !settings.is_gtk_cursor_blink() {
            return None; // the user's carets do not blink: nothing to stop
        }
        let secs = u64::try_from(settings.gtk_cursor_blink_timeout()).unwrap_or(10);
        let cycle_ms = u64::try_from(settings.gtk_cursor_blink_time()).unwrap_or(1200);
        BLINK.with(|b| b.borrow_mut().timeout = Some(rest_after(secs, cycle_ms)));
    }
    BLINK.with(|b| b.borrow().timeout).map(|d| d.as_millis() as u64)
}

/// Watches a window's input (main thread): its carets stop blinking after the timeout without any.
pub fn watch(w: &tauri::WebviewWindow) {
    let Ok(gw) = w.gtk_window() else { return };
    if rest_ms().is_none() {
        return;
    }
    gw.connect_key_press_event(|_, _| {
        input();
        Propagation::Proceed
    });
    gw.connect_button_press_event(|_, _| {
        input();
        Propagation::Proceed
    });
    gw.connect_focus_in_event(|_, _| {
        input();
        Propagation::Proceed
    });
    input();
}

/// When the caret rests after the last input: `timeout_secs` (1 s .. 1 h) rounded up to whole blink cycles of
/// `cycle_ms` (100 ms .. 10 s), plus a quarter cycle — in the middle of the "on" half of a cycle started by that input.
fn rest_after(timeout_secs: u64, cycle_ms: u64) -> Duration {
    let (timeout, cycle) = (timeout_secs.clamp(1, 3600) * 1000, cycle_ms.clamp(100, 10_000));
    Duration::from_millis(timeout.div_ceil(cycle) * cycle + cycle / 4)
}

/// A key press, a click or the focus: the caret blinks (again), and stops after the timeout without input.
fn input() {
    let (restart, schedule) = BLINK.with(|b| {
        let mut b = b.borrow_mut();
        let Some(timeout) = b.timeout else { return (false, None) };
        b.last_input = Some(Instant::now());
        let restart = std::mem::take(&mut b.stopped);
        let schedule = (!b.timer).then_some(timeout);
        b.timer = true;
        (restart, schedule)
    });
    if restart && let Some(s) = gtk::Settings::default() {
        s.set_gtk_cursor_blink(true);
    }
    if let Some(after) = schedule {
        glib::timeout_add_local_once(after, check);
    }
}

/// The timer: stop blinking if the timeout has passed since the last input, else look again when it will have.
fn check() {
    let left = BLINK.with(|b| {
        let mut b = b.borrow_mut();
        let (Some(timeout), Some(last)) = (b.timeout, b.last_input) else {
            b.timer = false;
            return None;
        };
        let idle = last.elapsed();
        if idle >= timeout {
            b.timer = false;
            b.stopped = true;
            None
        } else {
            Some(timeout - idle)
        }
    });
    match left {
        Some(after) => {
            glib::timeout_add_local_once(after, check);
        }
        None => {
            if BLINK.with(|b| b.borrow().stopped)
                && let Some(s) = gtk::Settings::default()
            {
                s.set_gtk_cursor_blink(false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::rest_after;
    use std::time::Duration;

    #[test]
    fn the_caret_rests_in_the_on_half_of_a_blink_after_the_timeout() {
        // GTK's defaults: 10 s, a 1.2 s cycle → 9 cycles (10.8 s) and a quarter (0.3 s)
        assert_eq!(rest_after(10, 1200), Duration::from_millis(11_100));
        assert_eq!(rest_after(10, 1000), Duration::from_millis(10_250), "a timeout of whole cycles is not lengthened");
        for (secs, cycle) in [(10, 1200), (3, 700), (60, 1234), (0, 50), (99_999, 99_999)] {
            let at = rest_after(secs, cycle).as_millis() as u64;
            let cycle = cycle.clamp(100, 10_000);
            assert!(at % cycle < cycle / 2, "{secs} s / {cycle} ms: {at} ms is in the on half");
            assert!(at >= secs.clamp(1, 3600) * 1000, "never before the user's timeout");
        }
    }
}
