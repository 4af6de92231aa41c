//! `cargo xtask bundle`: the release app and its Linux packages (.deb, .rpm) through the Tauri CLI, and the package
//! test of `cargo xtask test`: install the .deb with dpkg, drive the INSTALLED binary under Xvfb against a devserver
//! (WebDriver), then purge it and check that nothing is left.
//!
//! The CLI is the pinned `@tauri-apps/cli` devDependency of `ui/` (a prebuilt binary from npm; `cargo install
//! tauri-cli` would compile for ~15 min). It runs from `ui/` with `TAURI_APP_PATH=src-tauri`: from the repository root
//! it would take the root `tauri.conf.json` as the project and fail with "No package info in the config file" (the
//! root Cargo.toml is a workspace, not a package). Through the `src-tauri/tauri.conf.json` symlink it finds the
//! `hermes-desktop` package, whose version comes from `[workspace.package]` (the config sets none: one source of
//! truth). AppImage is not built here: its bundler downloads linuxdeploy/AppRun from GitHub at build time; the release
//! workflow builds it.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{APT_APP_BUILD, APT_APP_TEST, R, cargo, ensure_apt, headless, is_root, sh, target_dir, ui_build};

/// What the package test needs on top of the app's build and test packages.
const APT_PACKAGE_TEST: &[&str] = &["desktop-file-utils", "binutils"];

/// Build the release app and the given bundles (`deb`, `rpm`); returns the bundle files. `build_ui`: false when
/// `ui/dist` was just built (rebuilding it would change its files' times and recompile the release app).
pub fn build(root: &Path, bundles: &[&str], build_ui: bool) -> Result<Vec<PathBuf>, String> {
    ensure_apt(APT_APP_BUILD)?;
    if build_ui || !root.join("ui/dist/index.html").exists() {
        ui_build(root)?;
    }
    let out = target_dir(root).join("release/bundle");
    for b in bundles {
        // stale bundles of an older version would be picked up otherwise
        let _ = std::fs::remove_dir_all(out.join(b));
    }
    let list = bundles.join(",");
    // `hermes-resident` (the window process hands its connections to it) goes beside the app as a Tauri sidecar:
    // built first, copied under its target triple, named in the config for this build only (a `tauri.conf.json`
    // entry would make every build of the app require the file).
    sh(cargo().current_dir(root).args(["build", "--release", "--locked", "-p", "hermes-resident"]))?;
    let triple = output(Command::new("rustc").arg("-vV"))?
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .ok_or("rustc -vV names no host")?;
    let sidecars = root.join("src-tauri/binaries");
    std::fs::create_dir_all(&sidecars).map_err(|e| e.to_string())?;
    std::fs::copy(target_dir(root).join("release/hermes-resident"), sidecars.join(format!("hermes-resident-{triple}")))
        .map_err(|e| format!("cannot copy hermes-resident: {e}"))?;
    let mut c = Command::new("npx");
    c.current_dir(root.join("ui"))
        .args(["--no-install", "tauri", "build", "--ci", "--bundles", &list])
        .args(["--config", r#"{"bundle":{"externalBin":["binaries/hermes-resident"]}}"#])
        // tauri crate 2.11 vs @tauri-apps/api 2.12 (both 2.x; the UI only uses core `invoke`/`Channel`/`listen`)
        .arg("--ignore-version-mismatches")
        .args(["--", "--locked"])
        .env("TAURI_APP_PATH", root.join("src-tauri"))
        .env("TAURI_FRONTEND_PATH", root.join("ui"))
        .env("CARGO_TARGET_DIR", target_dir(root));
    sh(&mut c)?;
    let mut files = Vec::new();
    for b in bundles {
        let dir = out.join(b);
        let found: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| format!("no {b} bundle in {}: {e}", dir.display()))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == *b))
            .collect();
        match found.as_slice() {
            [one] => files.push(one.clone()),
            _ => return Err(format!("expected one .{b} in {}, found {found:?}", dir.display())),
        }
    }
    Ok(files)
}

fn mib(p: &Path) -> f64 {
    std::fs::metadata(p).map(|m| m.len() as f64 / (1024.0 * 1024.0)).unwrap_or(0.0)
}

/// `cargo xtask bundle [--bundles deb,rpm]`
pub fn bundle(root: &Path, args: &[String]) -> R {
    let list = match args.iter().position(|a| a == "--bundles") {
        Some(i) => args.get(i + 1).cloned().ok_or("--bundles needs a list, e.g. deb,rpm")?,
        None => "deb,rpm".to_string(),
    };
    let bundles: Vec<&str> = list.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    if let Some(b) = bundles.iter().find(|b| !matches!(**b, "deb" | "rpm")) {
        return Err(format!(
            "`{b}` is not built here: .deb and .rpm only (AppImage downloads its tools at build time, macOS and Windows \
             bundles need their OS; see .github/workflows/release.yml)"
        ));
    }
    let files = build(root, &bundles, true)?;
    let bin = target_dir(root).join("release/hermes-desktop");
    eprintln!("\nxtask: release binary {} ({:.1} MiB)", bin.display(), mib(&bin));
    for f in &files {
        eprintln!("xtask: {} ({:.1} MiB)", f.display(), mib(f));
    }
    Ok(())
}

fn sudo_works() -> bool {
    Command::new("sudo").args(["-n", "true"]).status().is_ok_and(|s| s.success())
}

/// `program` as root: directly when we are root, else through password-less sudo (GitHub's runners).
fn root_cmd(program: &str) -> Command {
    if is_root() {
        Command::new(program)
    } else {
        let mut c = Command::new("sudo");
        c.args(["-n", "--preserve-env=DEBIAN_FRONTEND", program]);
        c
    }
}

fn output(cmd: &mut Command) -> Result<String, String> {
    let shown = format!("{cmd:?}");
    let o = cmd.output().map_err(|e| format!("cannot run {shown}: {e}"))?;
    if !o.status.success() {
        return Err(format!("{shown} failed: {}", String::from_utf8_lossy(&o.stderr)));
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

fn deb_field(deb: &Path, field: &str) -> Result<String, String> {
    Ok(output(Command::new("dpkg-deb").arg("-f").arg(deb).arg(field))?.trim().to_string())
}

fn installed(pkg: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", pkg])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
}

/// The shared libraries the binary links (ELF NEEDED entries).
fn needed(bin: &Path) -> Result<Vec<String>, String> {
    let dump = output(Command::new("objdump").arg("-p").arg(bin))?;
    Ok(dump.lines().filter_map(|l| l.trim().strip_prefix("NEEDED")).map(|s| s.trim().to_string()).collect())
}

/// The package's `Depends:` must name what the binary links directly beyond glibc and the GTK/WebKit stack (which
/// the bundler adds), plus the tray library that is loaded at run time (dlopen, so not in NEEDED).
fn check_depends(deb: &Path, bin: &Path) -> R {
    let depends = deb_field(deb, "Depends")?;
    let names: Vec<String> =
        depends.split(',').map(|d| d.split(['(', ' ']).find(|s| !s.is_empty()).unwrap_or("").to_string()).collect();
    eprintln!("xtask: Depends: {depends}");
    let libs = needed(bin)?;
    eprintln!("xtask: NEEDED: {}", libs.join(" "));
    let map: &[(&str, &str)] = &[
        ("libasound.so.2", "libasound2"),
        ("libdbus-1.so.3", "libdbus-1-3"),
        ("libwebkit2gtk-4.1.so.0", "libwebkit2gtk-4.1-0"),
        ("libgtk-3.so.0", "libgtk-3-0"),
        ("libspeechd.so.2", "libspeechd2"),
        // src-tauri/src/fonts.rs asks fontconfig what CSS `system-ui` resolves to
        ("libfontconfig.so.1", "libfontconfig1"),
        // screen capture (hermes-capture → xcap): GBM and wayland-client for its Wayland path, xcb for X11
        ("libgbm.so.1", "libgbm1"),
        ("libwayland-client.so.0", "libwayland-client0"),
        ("libxcb.so.1", "libxcb1"),
    ];
    // Libraries that arrive with glibc or with the GTK/WebKitGTK packages the bundler always declares.
    let implied = [
        "libc.so",
        "libm.so",
        "libgcc_s.so",
        "libpthread.so",
        "libdl.so",
        "librt.so",
        "ld-linux",
        "libgtk-3.so",
        "libgdk-3.so",
        "libglib-2.0.so",
        "libgobject-2.0.so",
        "libgio-2.0.so",
        "libgmodule-2.0.so",
        "libcairo",
        "libgdk_pixbuf-2.0.so",
        "libpango",
        "libharfbuzz",
        "libatk",
        "libjavascriptcoregtk-4.1.so",
        "libsoup-3.0.so",
    ];
    for lib in &libs {
        match map.iter().find(|(soname, _)| soname == lib) {
            Some((soname, pkg)) if !names.iter().any(|n| n == pkg) => {
                return Err(format!("the binary links {soname} but the .deb does not depend on {pkg}: {depends}"));
            }
            Some(_) => {}
            None if implied.iter().any(|p| lib.starts_with(p)) => {}
            None => {
                return Err(format!(
                    "the binary links {lib}, which xtask/src/bundle.rs does not map to a package: declare its package \
                     in tauri.conf.json (bundle.linux.deb/rpm depends) and add it to the map"
                ));
            }
        }
    }
    if !names.iter().any(|n| n == "libayatana-appindicator3-1") {
        return Err(format!("the tray needs libayatana-appindicator3-1 (loaded at run time): {depends}"));
    }
    Ok(())
}

/// Build the release .deb, install it, run the installed app (WebDriver, devserver, updates control), purge it.
/// `build_ui`: see [`build`].
pub fn package_test(root: &Path, build_ui: bool) -> R {
    if !Path::new("/usr/bin/dpkg").exists() {
        eprintln!("xtask: package test skipped: not a Debian/Ubuntu system");
        return Ok(());
    }
    if !is_root() && !sudo_works() {
        eprintln!("xtask: package test skipped: installing a .deb needs root or password-less sudo (CI runs as root)");
        return Ok(());
    }
    let mut apt: Vec<&str> = APT_APP_TEST.to_vec();
    apt.extend_from_slice(APT_PACKAGE_TEST);
    ensure_apt(&apt)?;
    let deb = build(root, &["deb"], build_ui)?.remove(0);
    let pkg = deb_field(&deb, "Package")?;
    eprintln!("xtask: {} ({:.1} MiB), package `{pkg}`", deb.display(), mib(&deb));
    if installed(&pkg) {
        return Err(format!(
            "a `{pkg}` package is already installed on this machine: the package test will not replace it \
             (remove it with `dpkg -r {pkg}` first)"
        ));
    }
    check_depends(&deb, &target_dir(root).join("release/hermes-desktop"))?;

    if sh(root_cmd("dpkg").arg("-i").arg(&deb)).is_err() {
        // missing dependencies: let apt resolve them (and fail if it cannot)
        sh(root_cmd("apt-get").args(["install", "-f", "-y", "-qq"]).env("DEBIAN_FRONTEND", "noninteractive"))?;
    }
    let files: Vec<PathBuf> =
        output(Command::new("dpkg").args(["-L", &pkg]))?.lines().map(PathBuf::from).filter(|p| p.is_file()).collect();
    let run = run_installed(root, &files);
    // uninstall whatever happened above
    let purge = sh(root_cmd("dpkg").args(["--purge", &pkg]));
    run?;
    purge?;
    if installed(&pkg) {
        return Err(format!("`{pkg}` is still installed after dpkg --purge"));
    }
    let left: Vec<&PathBuf> = files.iter().filter(|p| p.exists()).collect();
    if !left.is_empty() {
        return Err(format!("files left behind after dpkg --purge: {left:?}"));
    }
    eprintln!("xtask: package test passed: installed, ran, purged ({} files removed)", files.len());
    Ok(())
}

fn run_installed(root: &Path, files: &[PathBuf]) -> R {
    let bin = files
        .iter()
        .find(|p| p.as_path() == Path::new("/usr/bin/hermes-desktop"))
        .ok_or_else(|| format!("the package installs no /usr/bin/hermes-desktop: {files:?}"))?
        .clone();
    // the resident process, beside it (handover.rs looks there): without arguments it says how to use it (exit 2)
    let resident = Path::new("/usr/bin/hermes-resident");
    if !files.iter().any(|p| p == resident) {
        return Err(format!("the package installs no {}: {files:?}", resident.display()));
    }
    let usage = Command::new(resident).output().map_err(|e| format!("{}: {e}", resident.display()))?;
    if usage.status.code() != Some(2) || !String::from_utf8_lossy(&usage.stderr).contains("--data-dir") {
        return Err(format!(
            "{} without arguments: {:?} {}",
            resident.display(),
            usage.status,
            String::from_utf8_lossy(&usage.stderr)
        ));
    }
    let desktop = files
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "desktop"))
        .ok_or("the package installs no .desktop file")?;
    sh(Command::new("desktop-file-validate").arg(desktop))?;
    let entry = std::fs::read_to_string(desktop).map_err(|e| e.to_string())?;
    for want in ["MimeType=x-scheme-handler/hermes", "Categories=Network;Chat;", "Exec=hermes-desktop %u"] {
        if !entry.contains(want) {
            return Err(format!("{}: no `{want}` in\n{entry}", desktop.display()));
        }
    }
    if !files.iter().any(|p| p.to_string_lossy().contains("/icons/hicolor/") && p.ends_with("apps/hermes-desktop.png"))
    {
        return Err("the package installs no hicolor icon".into());
    }
    // the installed program, in a throwaway home (the app writes its deep-link handler and window state there)
    let cargo_bin = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    sh(cargo().current_dir(root).args(["test", "-p", "hermes-desktop", "--locked", "--test", "package", "--no-run"]))?;
    let home = std::env::temp_dir().join(format!("hermes-package-home-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home).map_err(|e| e.to_string())?;
    let real_home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let cargo_home = std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{real_home}/.cargo"));
    let rustup_home = std::env::var("RUSTUP_HOME").unwrap_or_else(|_| format!("{real_home}/.rustup"));
    let sub = |d: &str| home.join(d).display().to_string();
    let inner = format!("{cargo_bin} test -p hermes-desktop --locked --test package -- --test-threads=1 --nocapture");
    let r = headless(
        root,
        &inner,
        &[
            ("HERMES_PACKAGE_BIN", &bin.display().to_string()),
            ("HOME", &home.display().to_string()),
            ("XDG_CONFIG_HOME", &sub(".config")),
            ("XDG_CACHE_HOME", &sub(".cache")),
            ("XDG_STATE_HOME", &sub(".local/state")),
            ("CARGO_HOME", &cargo_home),
            ("RUSTUP_HOME", &rustup_home),
        ],
    );
    let _ = std::fs::remove_dir_all(&home);
    r
}
