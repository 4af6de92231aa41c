//! "Look at my screen" for a region, without the sending: `screen_at` → `crop` to 1200×800 → `encode_png`, 20 times
//! on our own Xvfb (1920×1080×24) showing a desktop-like picture (flat areas, text, a photo-like gradient with
//! noise). Prints the median and the worst of each stage and of the total, and the PNG's size. The budget for the
//! whole gesture, sending included, is 300 ms.
//!
//! `cargo bench -p hermes-capture --bench region` (`harness = false`; needs Xvfb, like tests/x11.rs).

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::{SCREEN_H, SCREEN_W, X, Xvfb, use_display, wait_until};
use hermes_capture::{Rect, crop, encode_png, screen_at};
use image::ImageEncoder;
use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{ConnectionExt as _, CreateGCAux, CreateWindowAux, ImageFormat, Rectangle, WindowClass};

const RUNS: usize = 20;
const REGION: Rect = Rect { x: 100, y: 80, width: 1200, height: 800 };
const PHOTO: (i16, i16, u16, u16) = (860, 420, 520, 360);

/// A desktop-like picture as the background of a full-screen override-redirect window (no window manager needed).
fn draw_desktop(x: &X) {
    let c = &x.conn;
    let (w, h) = (SCREEN_W, SCREEN_H);
    let pixmap = c.generate_id().unwrap();
    c.create_pixmap(24, pixmap, x.root, w, h).unwrap();
    let gc = c.generate_id().unwrap();
    c.create_gc(gc, pixmap, &CreateGCAux::new().graphics_exposures(0)).unwrap();
    let fill = |colour: [u8; 3], rects: &[Rectangle]| {
        c.change_gc(gc, &x11rb::protocol::xproto::ChangeGCAux::new().foreground(x.pixel(colour))).unwrap();
        c.poly_fill_rectangle(pixmap, gc, rects).unwrap();
    };
    let r = |x: i16, y: i16, width: u16, height: u16| Rectangle { x, y, width, height };
    fill([58, 110, 165], &[r(0, 0, w, h)]); // wallpaper
    fill([236, 236, 236], &[r(80, 60, 1460, 900)]); // an application window
    fill([205, 205, 210], &[r(80, 60, 1460, 34)]); // its title bar
    fill([255, 255, 255], &[r(100, 110, 1420, 830)]); // its page
    fill([30, 120, 220], &[r(120, 130, 120, 32), r(260, 130, 120, 32), r(400, 130, 120, 32)]); // buttons
    fill([40, 40, 40], &[r(0, h as i16 - 40, w, 40)]); // a panel
    fill([220, 60, 60], &[r(1600, 200, 260, 180)]); // another window
    // Text, with the server's core "fixed" font (when the server has it).
    let font = c.generate_id().unwrap();
    if c.open_font(font, b"fixed").unwrap().check().is_ok() {
        c.change_gc(
            gc,
            &x11rb::protocol::xproto::ChangeGCAux::new()
                .font(font)
                .foreground(x.pixel([20, 20, 20]))
                .background(x.pixel([255, 255, 255])),
        )
        .unwrap();
        let words = "Look at my screen: the agent reads what is shown here, crops and encodes it in a blink. ";
        for line in 0..58 {
            let text: String = words.chars().cycle().skip(line * 7).take(110).collect();
            c.image_text8(pixmap, gc, 120, 190 + line as i16 * 13, text.as_bytes()).unwrap();
        }
    } else {
        eprintln!("region: no core font \"fixed\" on this server: no text in the picture");
    }
    // A photo-like area: gradients with deterministic noise (the hard case for PNG).
    let (px, py, pw, ph) = PHOTO;
    let mut seed = 0x2545_f491_u32;
    let mut noise = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        (seed % 24) as u8
    };
    let strip = 60u16;
    for y0 in (0..ph).step_by(usize::from(strip)) {
        let rows = strip.min(ph - y0);
        let mut data = Vec::with_capacity(usize::from(pw) * usize::from(rows) * 4);
        for y in y0..y0 + rows {
            for xx in 0..pw {
                let rgb = [
                    ((xx / 3) as u8).wrapping_add(noise()),
                    ((y / 3) as u8).wrapping_add(60).wrapping_add(noise()),
                    (((xx + y) / 5) as u8).wrapping_add(40).wrapping_add(noise()),
                ];
                data.extend_from_slice(&x.pixel(rgb).to_le_bytes());
            }
        }
        c.put_image(ImageFormat::Z_PIXMAP, pixmap, gc, pw, rows, px, py + y0 as i16, 0, 24, &data).unwrap();
    }
    let win = c.generate_id().unwrap();
    c.create_window(
        x11rb::COPY_DEPTH_FROM_PARENT,
        win,
        x.root,
        0,
        0,
        w,
        h,
        0,
        WindowClass::INPUT_OUTPUT,
        x11rb::COPY_FROM_PARENT,
        &CreateWindowAux::new().background_pixmap(pixmap).override_redirect(1),
    )
    .unwrap();
    c.map_window(win).unwrap();
    c.flush().unwrap();
    wait_until(10, "the desktop picture to show", || x.root_pixel(20, 20) == [58, 110, 165]);
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Median and worst, in ms.
fn stats(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort_unstable();
    let n = v.len();
    let median = if n % 2 == 1 { ms(v[n / 2]) } else { (ms(v[n / 2 - 1]) + ms(v[n / 2])) / 2.0 };
    (median, ms(v[n - 1]))
}

fn main() {
    if cfg!(not(target_os = "linux")) {
        eprintln!("region: X11 (Xvfb, openbox) runs on Linux only");
        return;
    }
    let xvfb = Xvfb::start();
    use_display(&xvfb.display);
    let x = X::connect(&xvfb.display);
    draw_desktop(&x);

    let (mut t_cap, mut t_crop, mut t_png, mut t_all, mut sizes) = (vec![], vec![], vec![], vec![], vec![]);
    for _ in 0..RUNS {
        let t0 = Instant::now();
        let shot = screen_at(960, 540).expect("screen_at");
        let t1 = Instant::now();
        let region = crop(&shot.image, REGION).expect("crop");
        let t2 = Instant::now();
        let png = encode_png(&region).expect("encode_png");
        let t3 = Instant::now();
        assert_eq!(region.dimensions(), (REGION.width, REGION.height));
        t_cap.push(t1 - t0);
        t_crop.push(t2 - t1);
        t_png.push(t3 - t2);
        t_all.push(t3 - t0);
        sizes.push(png.len());
    }
    // What xcap's own capture costs, without our monitor choice around it.
    let mut t_xcap = vec![];
    for _ in 0..RUNS {
        let m = xcap::Monitor::all().expect("monitors").into_iter().next().expect("a monitor");
        let t0 = Instant::now();
        let _img = m.capture_image().expect("capture_image");
        t_xcap.push(t0.elapsed());
    }
    // For comparison, other settings of the PNG encoder on the same region (RGB, like `encode_png`).
    let shot = screen_at(960, 540).unwrap();
    let region = crop(&shot.image, REGION).unwrap();
    let rgb = image::DynamicImage::ImageRgba8(region).to_rgb8();
    let others: Vec<(&str, f64, usize)> = [
        ("fdeflate fast, up", CompressionType::Fast, FilterType::Up),
        ("fdeflate fast, adaptive", CompressionType::Fast, FilterType::Adaptive),
        ("balanced (level 6), adaptive", CompressionType::Default, FilterType::Adaptive),
    ]
    .into_iter()
    .map(|(name, c, f)| {
        let mut best = (f64::MAX, 0);
        for _ in 0..5 {
            let t0 = Instant::now();
            let mut out = Vec::new();
            PngEncoder::new_with_quality(&mut out, c, f)
                .write_image(rgb.as_raw(), rgb.width(), rgb.height(), image::ExtendedColorType::Rgb8)
                .unwrap();
            best = (best.0.min(ms(t0.elapsed())), out.len());
        }
        (name, best.0, best.1)
    })
    .collect();

    println!(
        "region: {RUNS} runs on Xvfb {SCREEN_W}x{SCREEN_H}, region {}x{} (median / max, ms)",
        REGION.width, REGION.height
    );
    for (name, v) in [("screen_at", t_cap), ("crop", t_crop), ("encode_png", t_png), ("total", t_all)] {
        let (med, max) = stats(v);
        println!("  {name:<11} {med:>7.1} / {max:>7.1}");
    }
    let (med, max) = stats(t_xcap);
    println!("  (xcap Monitor::capture_image alone: {med:.1} / {max:.1})");
    sizes.sort_unstable();
    let size = sizes[sizes.len() / 2];
    let raw_rgb = f64::from(REGION.width * REGION.height * 3);
    println!("  PNG {size} bytes ({:.1} % of the raw RGB)", 100.0 * size as f64 / raw_rgb);
    for (name, t, len) in others {
        println!("  (other PNG setting, {name}: {t:.1} ms, {len} bytes)");
    }
    drop(x);
    drop(xvfb);
}
