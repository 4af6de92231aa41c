//! Project tasks: `cargo xtask test` (every test, installing what it needs), `cargo xtask run` (the desktop app; on
//! the built-in demo agent when no profile exists), `cargo xtask e2e` (the app under WebDriver), `cargo xtask bench`,
//! `cargo xtask bindings` (regenerate `ui/src/bindings.ts`), `cargo xtask bundle` (the release .deb/.rpm). No dependencies: it must build in seconds on a fresh
//! machine.

mod bundle;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

/// Debian packages the tests need (build headers, the virtual microphone, speech for test audio).
const APT_TEST: &[&str] = &[
    "pkg-config",
    "libasound2-dev",
    "pulseaudio",
    "pulseaudio-utils",
    "libasound2-plugins",
    "alsa-utils",
    "espeak-ng",
    "sox",
    // the IANA zone files (/usr/share/zoneinfo): the shell's local-time table is tested on named zones (boot.rs)
    "tzdata",
    // dbus-daemon: a private bus where a stand-in NetworkManager and logind send the client's netwatch signals
    "dbus",
];

/// Debian packages to build the Tauri app (WebKitGTK 4.1, GTK 3, tray, D-Bus).
const APT_APP_BUILD: &[&str] = &[
    "libwebkit2gtk-4.1-dev",
    "libgtk-3-dev",
    "libsoup-3.0-dev",
    "librsvg2-dev",
    "libayatana-appindicator3-dev",
    "build-essential",
    "pkg-config",
    "libssl-dev",
    "libasound2-dev",
    "libdbus-1-dev",
    // fonts.rs asks fontconfig what CSS `system-ui` resolves to (already pulled in by the GTK headers; named here).
    "libfontconfig-dev",
    "file",
    // The app's read-aloud (hermes-voice feature `tts`): speech-dispatcher headers; its -sys crate runs bindgen.
    "libspeechd-dev",
    "libclang-dev",
    // Screen capture (hermes-capture → xcap): PipeWire headers for its -sys crate (bindgen, above) and the libraries
    // it links: GBM and EGL (its wlroots path), wayland-client/-server, libxcb (EGL, Wayland and xcb already come
    // with the GTK headers; named here).
    "libpipewire-0.3-dev",
    "libgbm-dev",
    "libegl-dev",
    "libwayland-dev",
    "libxcb1-dev",
];

/// Debian packages to run the app's end-to-end tests headless (X server, WebDriver, keychain, screenshots).
const APT_APP_TEST: &[&str] = &[
    "xvfb",
    "xauth",
    "imagemagick",
    "webkit2gtk-driver",
    "x11-utils",
    "xdotool",
    "dbus",
    "dbus-x11",
    "at-spi2-core",
    // the accessibility test reads the app's tree as a screen reader does: GTK's AT-SPI bridge and pyatspi
    "libatk-adaptor",
    "python3-pyatspi",
    "gnome-keyring",
    "libsecret-tools",
    // a CJK font, so that the Chinese UI in the e2e screenshots shows glyphs, not boxes
    "fonts-wqy-microhei",
    // and a colour emoji font, as on a desktop (the Linux packages recommend it): agents' text and cards carry emoji
    // ("✏️ Your own answer"), which WebKit otherwise draws as boxes
    "fonts-noto-color-emoji",
    // Read-aloud at run time: speech-dispatcher with its espeak-ng output module.
    "speech-dispatcher",
    "speech-dispatcher-espeak-ng",
    // the desktop's notification service, for the notification test (and `gdbus`, to read the tray from the bus)
    "notification-daemon",
    "libglib2.0-bin",
    // the drag-and-drop test (e2e_dnd.rs): a GTK drag source in Python offers files as text/uri-list, and xclip puts
    // an image on the clipboard for the paste test
    "python3-gi",
    "gir1.2-gtk-3.0",
    "xclip",
    // a window manager for hermes-capture's X11 test: xcap lists windows from _NET_CLIENT_LIST_STACKING, which only
    // a window manager sets
    "openbox",
];

fn all_apt() -> Vec<&'static str> {
    let mut v: Vec<&str> = APT_TEST.iter().chain(APT_APP_BUILD).chain(APT_APP_TEST).copied().collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = root();
    let res = match args.first().map(String::as_str) {
        Some("test") => test(&root, &args[1..]),
        Some("run") => run(&root, &args[1..]),
        Some("deps") => ensure_apt(&all_apt()),
        Some("e2e") => ensure_apt(&all_apt()).and_then(|_| ui_build(&root)).and_then(|_| e2e(&root, &args[1..])),
        Some("bench") => ensure_apt(&all_apt()).and_then(|_| ui_build(&root)).and_then(|_| bench(&root, &args[1..])),
        Some("bindings") => bindings(&root),
        Some("soak") => soak(&root),
        Some("bundle") => bundle::bundle(&root, &args[1..]),
        Some("package-test") => bundle::package_test(&root, !args.iter().any(|a| a == "--no-ui-build")),
        _ => {
            eprintln!(
                "usage: cargo xtask <test|run|e2e|bench|bindings|soak|bundle|package-test|deps>\n  test [--quick]      every test of the repository\n  run [--data-dir D]  the desktop app (demo agent when no profile; throwaway data unless --data-dir)\n  e2e [filter]        the app's end-to-end tests (Xvfb, WebDriver, keychain)\n  bench [app|voice]   desktop app figures (launch, memory, streaming; voice: key-up → frame, CPU)\n  bindings            regenerate ui/src/bindings.ts\n  soak                long reliability runs (1,000-exchange fault soak, hostile agent)\n  bundle [--bundles deb,rpm]  the release app and its .deb/.rpm (target/release/bundle)\n  package-test        the release .deb installed (dpkg, as root), its program run under Xvfb, then purged"
            );
            Err("unknown task".into())
        }
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The checkout this run is for, found at run time: `cargo run` (the `cargo xtask` alias) sets CARGO_MANIFEST_DIR
/// for the program it runs. The compile-time value is not used: with a target directory shared between checkouts
/// (CI's, under ~/.cache), cargo can reuse an xtask binary built in another clone, which then worked — and ran the
/// tests — in that other clone. Without cargo: the nearest directory upwards whose Cargo.toml has `[workspace]`.
fn root() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from)
        && let Some(parent) = dir.parent()
        && parent.join("Cargo.toml").is_file()
    {
        return parent.to_path_buf();
    }
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    here.ancestors()
        .find(|d| std::fs::read_to_string(d.join("Cargo.toml")).is_ok_and(|t| t.contains("[workspace]")))
        .map(Path::to_path_buf)
        .unwrap_or(here)
}

type R = Result<(), String>;

fn sh(cmd: &mut Command) -> R {
    let shown = format!("{cmd:?}");
    eprintln!("\n==> {}", shown.replace('"', ""));
    let t = Instant::now();
    let status = cmd.status().map_err(|e| format!("cannot run {shown}: {e}"))?;
    eprintln!("<== {:.1} s", t.elapsed().as_secs_f64());
    if status.success() { Ok(()) } else { Err(format!("failed ({status}): {shown}")) }
}

fn have(bin: &str) -> bool {
    Command::new("sh").arg("-c").arg(format!("command -v {bin} >/dev/null 2>&1")).status().is_ok_and(|s| s.success())
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0").unwrap_or(false)
}

/// Install missing Debian/Ubuntu packages (with sudo when not root); elsewhere, say what is missing.
fn ensure_apt(pkgs: &[&str]) -> R {
    if !Path::new("/usr/bin/dpkg-query").exists() {
        eprintln!(
            "xtask: not a Debian/Ubuntu system: install the equivalents of these packages yourself: {}",
            pkgs.join(" ")
        );
        return Ok(());
    }
    let missing: Vec<&str> = pkgs
        .iter()
        .copied()
        .filter(|p| {
            let out = Command::new("dpkg-query").args(["-W", "-f=${Status}", p]).output();
            !out.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    eprintln!("xtask: installing Debian packages: {}", missing.join(" "));
    let sudo: &[&str] = if is_root() { &[] } else { &["sudo"] };
    let apt = |args: &[&str]| {
        let mut all: Vec<&str> = sudo.to_vec();
        all.push("apt-get");
        all.extend_from_slice(args);
        let mut c = Command::new(all[0]);
        c.args(&all[1..]).env("DEBIAN_FRONTEND", "noninteractive");
        c
    };
    sh(&mut apt(&["update", "-qq"]))?;
    let mut install = vec!["install", "-y", "-qq", "--no-install-recommends"];
    install.extend(missing.iter().copied());
    sh(&mut apt(&install))
}

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

fn test(root: &Path, args: &[String]) -> R {
    let quick = args.iter().any(|a| a == "--quick");
    let t = Instant::now();
    ensure_apt(&all_apt())?;
    sh(cargo().current_dir(root).args(["fmt", "--all", "--check"]))?;
    // The app embeds ui/dist at compile time: the UI is checked, tested and built first.
    if root.join("ui/package.json").exists() {
        ui_tests(root)?;
    }
    sh(cargo().current_dir(root).args(["clippy", "--workspace", "--all-targets", "--locked", "--", "-D", "warnings"]))?;
    // The slim app (no built-in demo agent) builds too: `demo` is a default feature, so the line above checks only
    // the full build. (The workspace build turns on the app's hermes-voice features, so the capture tests run below.)
    sh(cargo().current_dir(root).args([
        "clippy",
        "-p",
        "hermes-desktop",
        "--no-default-features",
        "--all-targets",
        "--locked",
        "--",
        "-D",
        "warnings",
    ]))?;
    sh(cargo()
        .current_dir(root)
        .args(["test", "--workspace", "--all-targets", "--locked"])
        .env("HERMES_REQUIRE_AUDIO", std::env::var("HERMES_REQUIRE_AUDIO").unwrap_or_else(|_| "1".into())))?;
    sh(cargo().current_dir(root).args(["test", "--workspace", "--doc", "--locked"]))?;
    // The desktop app in a real window: WebDriver scenarios, XSS corpus, token-in-log check.
    e2e(root, &[])?;
    // The release .deb: installed with dpkg, the installed app driven under Xvfb, then purged.
    bundle::package_test(root, !root.join("ui/package.json").exists())?;
    if !quick && root.join("fuzz/run.sh").exists() {
        fuzz_smoke(root)?;
    }
    eprintln!("\nxtask: all tests passed in {:.0} s", t.elapsed().as_secs_f64());
    Ok(())
}

fn npm(root: &Path, args: &[&str]) -> R {
    sh(Command::new("npm").current_dir(root.join("ui")).args(args))
}

fn ui_tests(root: &Path) -> R {
    if !have("npm") {
        return Err("npm is missing: install Node.js 20 and npm".into());
    }
    // `npm install`, not `npm ci`: vite 8 lists an optional dependency the registry does not serve, which `npm ci`
    // treats as a lock mismatch; `install` keeps the locked versions and skips the missing optional package.
    npm(root, &["install", "--no-audit", "--no-fund"])?;
    npm(root, &["run", "check"])?;
    npm(root, &["test"])?;
    npm(root, &["run", "build"])?;
    // The bundled avatar page: its contract and hostile-text tests.
    if root.join("avatar/package.json").exists() {
        let avatar = |args: &[&str]| sh(Command::new("npm").current_dir(root.join("avatar")).args(args));
        avatar(&["ci", "--no-audit", "--no-fund"])?;
        avatar(&["test"])?;
    }
    Ok(())
}

/// Build every fuzz target and run each briefly (the long runs are local; see fuzz/README).
fn fuzz_smoke(root: &Path) -> R {
    if !have("cargo-fuzz") {
        sh(cargo().args(["install", "cargo-fuzz", "--locked"]))?;
    }
    let secs = std::env::var("HERMES_FUZZ_SECONDS").unwrap_or_else(|_| "20".into());
    let out = Command::new("sh")
        .current_dir(root.join("fuzz"))
        .arg("-c")
        .arg("RUSTC_BOOTSTRAP=1 cargo fuzz list")
        .output()
        .map_err(|e| e.to_string())?;
    let targets: Vec<String> =
        String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).filter(|l| !l.is_empty()).collect();
    if targets.is_empty() {
        return Err("no fuzz targets found".into());
    }
    for t in targets {
        sh(Command::new("bash").current_dir(root).args(["fuzz/run.sh", &t, &secs]))?;
    }
    Ok(())
}

/// The long variants of the reliability suite (SECURITY.md): the fault soak with `HERMES_SOAK=long` (1,000 exchanges
/// and 20 uploads across ≥ 50 faults, ~6 min), the hostile-agent test (prints its peak RSS) and the agent that tries
/// to set our limits (`max_media_bytes` 10^15, 8 files × 2048 parts, a full media folder). `cargo xtask test`
/// runs the short variants; long fuzz runs are `fuzz/run.sh TARGET SECS`.
fn soak(root: &Path) -> R {
    let run = |test: &str| {
        sh(cargo()
            .current_dir(root)
            .args(["test", "-p", "hermes-client", "--locked", "--test", test, "--", "--nocapture"])
            .env("HERMES_SOAK", "long"))
    };
    run("soak")?;
    run("hostile")?;
    run("limits")
}

fn target_dir(root: &Path) -> PathBuf {
    std::env::var("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|_| root.join("target"))
}

fn ui_build(root: &Path) -> R {
    if !root.join("ui/node_modules").exists() {
        // `npm install`, not `npm ci`: vite 8 lists an optional dependency the registry does not serve, which `npm ci`
        // treats as a lock mismatch; `install` keeps the locked versions and skips the missing optional package.
        npm(root, &["install", "--no-audit", "--no-fund"])?;
    }
    npm(root, &["run", "build"])
}

/// Regenerate `ui/src/bindings.ts` (the `bindings_are_fresh` test fails in CI when it is stale).
fn bindings(root: &Path) -> R {
    sh(cargo()
        .current_dir(root)
        .args(["test", "-p", "hermes-desktop", "--test", "config", "bindings_are_fresh"])
        .env("HERMES_WRITE_BINDINGS", "1"))
}

/// A headless desktop session: Xvfb, a private D-Bus session and an unlocked gnome-keyring (a throwaway keyring in a
/// temporary XDG_DATA_HOME), then `inner` (a shell command).
fn headless(root: &Path, inner: &str, envs: &[(&str, &str)]) -> R {
    let tmp = std::env::temp_dir().join(format!("hermes-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(tmp.join("data")).map_err(|e| e.to_string())?;
    for d in ["runtime", "config", "cache"] {
        std::fs::create_dir_all(tmp.join(d)).map_err(|e| e.to_string())?;
    }
    let display = format!(":{}", 90 + std::process::id() % 400);
    // the screen's size (a bench may ask for another: `HERMES_XVFB_SCREEN=1920x1080x24`)
    let screen = std::env::var("HERMES_XVFB_SCREEN")
        .ok()
        .filter(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == 'x'))
        .unwrap_or_else(|| "1280x800x24".into());
    let script = format!(
        "set -e
Xvfb {display} -screen 0 {screen} -nolisten tcp >/dev/null 2>&1 &
XVFB=$!
trap 'kill $XVFB 2>/dev/null || true' EXIT
for i in $(seq 1 50); do xdpyinfo -display {display} >/dev/null 2>&1 && break; sleep 0.1; done
export DISPLAY={display}
# (guarded: a bare `export` with no words would print the whole environment into the log)
KEYRING_ENV=$(echo -n hermes-e2e | gnome-keyring-daemon --unlock --components=secrets)
[ -n \"$KEYRING_ENV\" ] && export $KEYRING_ENV
# (it prints no environment when its control socket is $XDG_RUNTIME_DIR's default: ask the bus whether it is there)
SECRETS=
for i in $(seq 1 20); do dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \\
  org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true' && SECRETS=1 && break; sleep 0.1; done
[ -n \"$SECRETS\" ] || echo 'xtask: no Secret Service on the session bus (no keychain in this session)' >&2
{inner}"
    );
    let mut c = Command::new("dbus-run-session");
    c.current_dir(root)
        .args(["--", "bash", "-c", &script])
        .env("XDG_DATA_HOME", tmp.join("data"))
        .env("XDG_CONFIG_HOME", tmp.join("config"))
        .env("XDG_CACHE_HOME", tmp.join("cache"))
        .env("XDG_RUNTIME_DIR", tmp.join("runtime"))
        .env("NO_AT_BRIDGE", "1");
    for (k, v) in envs {
        c.env(k, v);
    }
    let r = sh(&mut c);
    let _ = std::fs::remove_dir_all(&tmp);
    r
}

/// A PulseAudio daemon with a null sink (`vsink`, its monitor the default source): the virtual microphone of the
/// voice tests and the voice bench (inside [`headless`]'s session). What the session plays (the app's speech,
/// speech-dispatcher's stream) goes to a second null sink, `vspeaker`, as on a real machine where the microphone
/// and the speakers are different devices: speech-dispatcher keeps a sub-millisecond-latency stream open on the
/// default sink, which made the microphone's monitor deliver 2.5 ms blocks (400 a second) when both were `vsink`.
const VIRTUAL_MIC: &str = "chmod 700 \"$XDG_RUNTIME_DIR\"
pulseaudio -D --exit-idle-time=-1 --system=false -n --load=module-native-protocol-unix \\
  --load='module-null-sink sink_name=vsink' --load='module-null-sink sink_name=vspeaker' \\
  --log-target=file:\"$XDG_RUNTIME_DIR/pulse.log\" \\
  && pactl set-default-source vsink.monitor && pactl set-default-sink vspeaker \\
  || echo 'xtask: no PulseAudio for the voice tests'
trap 'pulseaudio --kill 2>/dev/null || true; kill $XVFB 2>/dev/null || true; \
  kill $(cat \"$XDG_RUNTIME_DIR/speech-dispatcher/pid/speech-dispatcher.pid\" 2>/dev/null) 2>/dev/null || true' EXIT";

fn e2e(root: &Path, args: &[String]) -> R {
    let filter = args.first().map(String::as_str).unwrap_or("e2e_");
    // `hermes-resident` beside the app's binary (the window process hands its connections to it): built as the
    // workspace's tests build it, and outside the headless session, whose environment makes some build scripts run
    // again (a no-op after `cargo xtask test`'s own run; `-p hermes-resident` would unify other features and build
    // every shared dependency once more)
    sh(cargo().current_dir(root).args(["test", "--workspace", "--all-targets", "--locked", "--no-run"]))?;
    let cargo_bin = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // A PulseAudio daemon with a null sink (`vsink`, its monitor the default source) is the virtual microphone of
    // the voice tests (e2e_voice.rs); they skip, or fail under HERMES_REQUIRE_AUDIO=1, without it.
    let inner = format!(
        "{VIRTUAL_MIC}
{cargo_bin} test -p hermes-desktop --locked --test e2e --test e2e_chat --test e2e_voice --test e2e_dnd --test e2e_pairing_home --test e2e_fidelity --test e2e_files --test e2e_grants --test e2e_avatar --test e2e_resident --test e2e_quick -- --test-threads=1 --nocapture {filter}"
    );
    let shots = target_dir(root).join("e2e-screens");
    let r = headless(root, &inner, &[("HERMES_E2E", "1")]);
    eprintln!("xtask: e2e screenshots in {}", shots.display());
    r
}

fn bench(root: &Path, args: &[String]) -> R {
    let cargo_bin = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // the app under measurement is optimised (profile `bench-app`: release without LTO), not a debug build; the UI
    // was built by the caller
    // the desktop figures (launch, memory, streaming), then the voice figures (key-up → frame, CPU while recording)
    // on the same optimised build, with the virtual microphone; `bench app` or `bench voice` runs one half
    let which = args.first().map(String::as_str).unwrap_or("all");
    if !matches!(which, "all" | "app" | "voice") {
        return Err(format!("bench: unknown part {which:?} (app, voice or nothing for both)"));
    }
    let mut inner = VIRTUAL_MIC.to_string();
    if which != "voice" {
        // the resident process the hidden app hands its connections to (beside the app's binary)
        inner += &format!("\n{cargo_bin} build --profile bench-app -p hermes-resident --locked");
        inner += &format!(
            "\n{cargo_bin} test --profile bench-app -p hermes-desktop --locked --test bench -- --test-threads=1 --nocapture"
        );
    }
    if which != "app" {
        // `bench voice barge_in` (or `keyup`): one of the voice benches
        let only = args.get(1).filter(|_| which == "voice").map_or(String::new(), |w| format!("_{w}"));
        if !only.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("bench voice: {only:?} is not a bench name"));
        }
        inner += &format!(
            "\n{cargo_bin} test --profile bench-app -p hermes-desktop --locked --test e2e_voice -- --test-threads=1 --nocapture bench_voice{only}"
        );
    }
    headless(root, &inner, &[("HERMES_BENCH", "1"), ("HERMES_E2E", "1")])
}

fn run(root: &Path, args: &[String]) -> R {
    ensure_apt(APT_APP_BUILD)?;
    ui_build(root)?;
    sh(cargo().current_dir(root).args(["build", "-p", "hermes-desktop", "-p", "hermes-resident"]))?;
    let data = match args.iter().position(|a| a == "--data-dir") {
        Some(i) => PathBuf::from(args.get(i + 1).ok_or("--data-dir needs a folder")?),
        None => {
            let d = std::env::temp_dir().join(format!("hermes-desktop-run-{}", std::process::id()));
            eprintln!("xtask: throwaway data folder {} (use --data-dir to keep one)", d.display());
            d
        }
    };
    let status = Command::new(target_dir(root).join("debug").join("hermes-desktop"))
        .env("HERMES_DATA_DIR", &data)
        .status()
        .map_err(|e| format!("cannot start the app: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("hermes-desktop: {status}")) }
}
