//! Real captures through xcap on our own Xvfb (1920×1080×24) with openbox as the window manager, against windows
//! whose pixels we drew (x11rb): the monitor shot, the window list and its filters, one window's pixels, crop and
//! PNG on real captures, the focused window.
//!
//! `harness = false`: `main` points the process at our X server (DISPLAY, read by xcap at every call) while it is
//! still single-threaded, then runs the scenarios in order on the one server. Fails (does not skip) without Xvfb or
//! openbox: `cargo xtask test` installs them.

mod common;

use common::{Reaped, Rgb, SCREEN_H, SCREEN_W, X, Xvfb, start_openbox, use_display, wait_until};
use hermes_capture::{
    CaptureError, Rect, WindowInfo, active_window_id, crop, encode_png, focused_window, screen_at, window_image,
    windows,
};
use image::{Rgba, RgbaImage};
use x11rb::protocol::xproto::{Rectangle, Window};

const PATTERN_TITLE: &str = "hermes-capture-pattern";
const PATTERN_CLASS: (&str, &str) = ("hermes-pattern", "HermesPattern");
/// Where we ask for the pattern window (the window manager's frame moves its content by the title bar and border).
const PATTERN_AT: (i16, i16) = (300, 200);
const PATTERN_W: u16 = 400;
const PATTERN_H: u16 = 300;
/// The pattern's quadrants: top left, top right, bottom left, bottom right.
const QUADRANTS: [Rgb; 4] = [[200, 30, 40], [30, 170, 60], [40, 70, 210], [240, 200, 20]];
const BACK: Rgb = [128, 128, 128];

fn quadrant_rects() -> [(Rectangle, Rgb); 4] {
    let (w, h) = (PATTERN_W / 2, PATTERN_H / 2);
    let r = |x: u16, y: u16| Rectangle { x: x as i16, y: y as i16, width: w, height: h };
    [(r(0, 0), QUADRANTS[0]), (r(w, 0), QUADRANTS[1]), (r(0, h), QUADRANTS[2]), (r(w, h), QUADRANTS[3])]
}

/// The pattern as we drew it.
fn expected_pattern() -> RgbaImage {
    RgbaImage::from_fn(PATTERN_W.into(), PATTERN_H.into(), |x, y| {
        let q = usize::from(x >= u32::from(PATTERN_W / 2)) + 2 * usize::from(y >= u32::from(PATTERN_H / 2));
        let [r, g, b] = QUADRANTS[q];
        Rgba([r, g, b, 255])
    })
}

/// Centres of the quadrants, relative to the window's origin.
fn quadrant_centres() -> [(i32, i32); 4] {
    let (w, h) = (i32::from(PATTERN_W), i32::from(PATTERN_H));
    [(w / 4, h / 4), (3 * w / 4, h / 4), (w / 4, 3 * h / 4), (3 * w / 4, 3 * h / 4)]
}

fn rgba([r, g, b]: Rgb) -> Rgba<u8> {
    Rgba([r, g, b, 255])
}

struct Scene {
    x: X,
    _wm: Reaped,
    pattern: Window,
    back: Window,
    tiny: Window,
    untitled: Window,
    minimized: Window,
    elsewhere: Window,
}

fn find(list: &[WindowInfo], id: Window) -> Option<&WindowInfo> {
    list.iter().find(|w| w.id == id)
}

/// Without a window manager there is no `_NET_CLIENT_LIST_STACKING`: the monitor still captures, the window list is
/// an error (not an empty list that would look like "no windows").
fn without_window_manager(x: &X) {
    let shot = screen_at(10, 10).expect("screen_at without a window manager");
    assert_eq!(shot.image.dimensions(), (u32::from(SCREEN_W), u32::from(SCREEN_H)));
    let w = x.plain_window((50, 50, 200, 200), "hermes-capture-unmanaged", [10, 200, 200]);
    wait_until(10, "the unmanaged window to show", || x.root_pixel(150, 150) == [10, 200, 200]);
    let shot = screen_at(10, 10).unwrap();
    assert_eq!(shot.image.get_pixel(150, 150), &rgba([10, 200, 200]), "the capture shows a window mapped without WM");
    match windows(0) {
        Err(CaptureError::Failed(m)) => eprintln!("x11: without a window manager, windows() = Failed({m:?})"),
        other => panic!("without a window manager windows() should fail, got {other:?}"),
    }
    x.destroy(w);
}

fn set_up(x: X, home: &std::path::Path) -> Scene {
    let wm = start_openbox(&x, home);
    // Behind the pattern (mapped first, so lower in the stack), partly covered by it.
    let back = x.plain_window((100, 100, 600, 500), "hermes-capture-back", BACK);
    let tiny = x.plain_window((1500, 100, 30, 30), "hermes-capture-tiny", [250, 0, 250]);
    let untitled = x.plain_window((1500, 300, 200, 200), "", [0, 250, 250]);
    let minimized = x.plain_window((1200, 600, 200, 200), "hermes-capture-minimized", [90, 40, 20]);
    let elsewhere = x.plain_window((1200, 100, 200, 200), "hermes-capture-elsewhere", [60, 60, 160]);
    let pattern =
        x.window((PATTERN_AT.0, PATTERN_AT.1, PATTERN_W, PATTERN_H), PATTERN_TITLE, PATTERN_CLASS, &quadrant_rects());
    let all = [back, tiny, untitled, minimized, elsewhere, pattern];
    for (i, w) in all.into_iter().enumerate() {
        wait_until(30, &format!("test window {i} ({w:#x}) to be mapped"), || x.viewable(w));
    }
    wait_until(10, "openbox to list the test windows", || {
        let s = x.stacking();
        all.iter().all(|w| s.contains(w))
    });
    x.iconify(minimized);
    wait_until(10, "the minimized window to be unmapped", || !x.viewable(minimized));
    // On another workspace: openbox unmaps its frame; the window stays in the list, not minimized.
    x.to_desktop(elsewhere, 1);
    wait_until(10, "the window sent to workspace 2 to be hidden", || !x.viewable(elsewhere));
    assert!(
        !x.net_wm_state(elsewhere).contains(&x.atom("_NET_WM_STATE_HIDDEN")),
        "a window on another workspace is not minimized (xcap alone would list it)"
    );
    x.activate(pattern);
    wait_until(10, "the pattern window to be active", || x.active_window() == Some(pattern));
    // Painted: the screen (read by X itself, not xcap) shows the four colours at the quadrants' centres.
    let (ox, oy) = x.origin(pattern);
    wait_until(10, "the pattern to be painted", || {
        quadrant_centres()
            .iter()
            .zip(QUADRANTS)
            .all(|(&(cx, cy), c)| x.root_pixel((ox + cx) as i16, (oy + cy) as i16) == c)
    });
    Scene { x, _wm: wm, pattern, back, tiny, untitled, minimized, elsewhere }
}

fn window_list(s: &Scene) {
    let t0 = std::time::Instant::now();
    let list = windows(0).expect("windows(0)");
    eprintln!("x11: windows(0) listed {} windows in {:.1} ms", list.len(), t0.elapsed().as_secs_f64() * 1e3);
    for w in &list {
        eprintln!("x11:   {w:?}");
    }
    let (ox, oy) = s.x.origin(s.pattern);
    let p = find(&list, s.pattern).expect("the pattern window is listed");
    assert_eq!(p.title, PATTERN_TITLE);
    assert_eq!(p.app_name, PATTERN_CLASS.1, "app_name is WM_CLASS's class");
    assert_eq!(p.pid, std::process::id(), "pid from _NET_WM_PID");
    assert_eq!((p.width, p.height), (u32::from(PATTERN_W), u32::from(PATTERN_H)), "the client area, not the frame");
    assert_eq!((p.x, p.y), (ox, oy), "the client area's position on the screen, inside the frame");
    eprintln!("x11: asked for the pattern at {PATTERN_AT:?}, its content is at ({ox}, {oy}) inside openbox's frame");
    assert!(p.focused, "the pattern window has the focus");

    let back = find(&list, s.back).expect("the window behind is listed");
    assert_eq!(back.title, "hermes-capture-back");
    assert!(!back.focused);
    assert_eq!(list.iter().filter(|w| w.focused).count(), 1, "one focused window");

    assert!(find(&list, s.tiny).is_none(), "smaller than 40×40: not listed");
    assert!(find(&list, s.untitled).is_none(), "no title: not listed");
    assert!(find(&list, s.minimized).is_none(), "minimized: not listed");
    assert!(find(&list, s.elsewhere).is_none(), "on another workspace: not listed");

    // Front to back: the list follows the window manager's stacking order, top first.
    let top_first: Vec<Window> = s.x.stacking().into_iter().rev().collect();
    let positions: Vec<usize> =
        list.iter().map(|w| top_first.iter().position(|&t| t == w.id).expect("listed windows are clients")).collect();
    assert!(positions.windows(2).all(|p| p[0] < p[1]), "front to back: {positions:?}");
    let (pi, bi) = (list.iter().position(|w| w.id == s.pattern), list.iter().position(|w| w.id == s.back));
    assert!(pi < bi, "the active pattern window is in front of the window behind it");

    // Our own windows left out by pid.
    let others = windows(std::process::id()).expect("windows(our pid)");
    assert!(find(&others, s.pattern).is_none() && find(&others, s.back).is_none(), "our pid is left out: {others:?}");
}

fn focus(s: &Scene) {
    let f = focused_window(0).expect("a focused window");
    assert_eq!(f.id, s.pattern);
    assert_eq!(active_window_id(), Some(s.pattern), "the quick read at a shortcut's press names it too");
    assert_eq!(f.title, PATTERN_TITLE);
    assert!(focused_window(std::process::id()).is_none(), "the focused window is ours: excluded");
    // Focus moves: xcap reads _NET_ACTIVE_WINDOW at each call.
    s.x.activate(s.back);
    wait_until(10, "the window behind to be active", || s.x.active_window() == Some(s.back));
    assert_eq!(focused_window(0).map(|w| w.id), Some(s.back));
    assert_eq!(active_window_id(), Some(s.back));
    s.x.activate(s.pattern);
    wait_until(10, "the pattern window to be active again", || s.x.active_window() == Some(s.pattern));
    let (ox, oy) = s.x.origin(s.pattern);
    wait_until(10, "the pattern to be painted on top again", || {
        quadrant_centres()
            .iter()
            .zip(QUADRANTS)
            .all(|(&(cx, cy), c)| s.x.root_pixel((ox + cx) as i16, (oy + cy) as i16) == c)
    });
    assert_eq!(focused_window(0).map(|w| w.id), Some(s.pattern));
}

fn monitor_and_window_pixels(s: &Scene) {
    let (ox, oy) = s.x.origin(s.pattern);
    let t0 = std::time::Instant::now();
    let shot = screen_at(ox + 10, oy + 10).expect("screen_at");
    eprintln!("x11: screen_at took {:.1} ms: {shot:?}", t0.elapsed().as_secs_f64() * 1e3);
    assert_eq!(shot.image.dimensions(), (u32::from(SCREEN_W), u32::from(SCREEN_H)));
    assert_eq!((shot.x, shot.y), (0, 0));
    assert_eq!(shot.scale, 1.0, "Xvfb has no Xft.dpi: scale 1");
    for (&(cx, cy), c) in quadrant_centres().iter().zip(QUADRANTS) {
        assert_eq!(shot.image.get_pixel((ox + cx) as u32, (oy + cy) as u32), &rgba(c), "quadrant at {cx},{cy}");
    }
    // The window behind shows where the pattern does not cover it.
    assert_eq!(shot.image.get_pixel(150, 150), &rgba(BACK));
    // Every pixel is opaque.
    assert!(shot.image.pixels().all(|p| p.0[3] == 255));

    // A point on no monitor: the primary (here the only) monitor.
    let far = screen_at(-10_000, 50_000).expect("screen_at off every monitor falls back");
    assert_eq!(far.image.dimensions(), shot.image.dimensions());
    assert_eq!(far.image.get_pixel((ox + 5) as u32, (oy + 5) as u32), &rgba(QUADRANTS[0]));

    // The window alone: exactly the pattern, without the frame.
    let t0 = std::time::Instant::now();
    let win = window_image(s.pattern).expect("window_image(pattern)");
    eprintln!("x11: window_image took {:.1} ms", t0.elapsed().as_secs_f64() * 1e3);
    assert_eq!(win.dimensions(), (u32::from(PATTERN_W), u32::from(PATTERN_H)));
    assert!(win == expected_pattern(), "window_image differs from the drawn pattern");

    // Cropping the screen at the window's rectangle (from the window list) gives the same pixels.
    let list = windows(0).unwrap();
    let p = find(&list, s.pattern).unwrap();
    let r = Rect { x: (p.x - shot.x) as u32, y: (p.y - shot.y) as u32, width: p.width, height: p.height };
    let cropped = crop(&shot.image, r).expect("crop at the window");
    assert!(cropped == win, "the screen cropped at the window's rectangle differs from window_image");

    // And a crop survives PNG: RGB, same pixels.
    let png = encode_png(&cropped).unwrap();
    let back = image::load_from_memory_with_format(&png, image::ImageFormat::Png).unwrap();
    assert_eq!(back.color(), image::ColorType::Rgb8);
    assert!(back.to_rgba8() == cropped, "PNG round trip of a real capture");

    // The window behind, partly covered: without a compositor X keeps no pixels for the covered part.
    let bw = window_image(s.back).expect("window_image(back)");
    let (bx, by) = s.x.origin(s.back);
    assert_eq!(bw.dimensions(), (600, 500));
    assert_eq!(bw.get_pixel(10, 10), &rgba(BACK));
    let covered = bw.get_pixel((ox - bx + 5) as u32, (oy - by + 5) as u32);
    eprintln!("x11: window_image of the covered window shows {covered:?} where the pattern covers it");
}

fn errors(s: &Scene) {
    // Not a client window: the root, and an id that does not exist.
    for id in [s.x.root, 0x7fff_fff0] {
        match window_image(id) {
            Err(CaptureError::NotFound(m)) => assert!(m.contains(&id.to_string()), "{m}"),
            other => panic!("window_image({id:#x}) should be NotFound, got {other:?}"),
        }
    }
    // A minimized window, or one on another workspace, is not captured (its pixels are not on the screen).
    for (what, id) in [("minimized", s.minimized), ("elsewhere", s.elsewhere)] {
        match window_image(id) {
            Err(CaptureError::Failed(m)) => {
                assert!(m.contains("not on the screen"), "{m}");
                eprintln!("x11: window_image({what}) = Failed({m:?})");
            }
            other => panic!("window_image({what}) should fail, got {:?}", other.map(|i| i.dimensions())),
        }
    }
}

fn main() {
    if cfg!(not(target_os = "linux")) {
        eprintln!("x11: X11 (Xvfb, openbox) runs on Linux only");
        return;
    }
    let filter: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    if !filter.is_empty() && !filter.iter().any(|f| "x11".contains(f.as_str()) || f.starts_with("x11")) {
        return;
    }
    let xvfb = Xvfb::start();
    use_display(&xvfb.display);
    eprintln!("x11: Xvfb on {}", xvfb.display);
    let x = X::connect(&xvfb.display);
    let home = std::env::temp_dir().join(format!("hermes-capture-x11-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();

    without_window_manager(&x);
    let scene = set_up(x, &home);
    window_list(&scene);
    focus(&scene);
    monitor_and_window_pixels(&scene);
    errors(&scene);

    drop(scene); // openbox first, then the server
    drop(xvfb);
    let _ = std::fs::remove_dir_all(&home);
    eprintln!("x11: all scenarios passed");
}
