//! The shipped bundle configuration, parsed from the real files: one version source, the icon set, the
//! Linux runtime dependencies, the macOS privacy string and entitlements, the updater key, the release workflow.
//! Paths inside `tauri.conf.json` are relative to `src-tauri/` (the CLI, tauri-build and `generate_context!()` read it
//! through the `src-tauri/tauri.conf.json` symlink).

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

fn conf() -> Value {
    serde_json::from_str(&std::fs::read_to_string(root().join("tauri.conf.json")).unwrap()).unwrap()
}

/// A path from the config, resolved like the Tauri CLI does.
fn from_conf(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
}

#[test]
fn the_version_comes_from_the_workspace_only() {
    let c = conf();
    assert!(
        c.get("version").is_none(),
        "tauri.conf.json must not set a version: Cargo's [workspace.package] is the source"
    );
    let cargo = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    assert!(cargo.contains(&format!("[workspace.package]\nversion = \"{}\"", env!("CARGO_PKG_VERSION"))));
    let app = std::fs::read_to_string(root().join("src-tauri/Cargo.toml")).unwrap();
    assert!(app.contains("version.workspace = true"));
    // the config that tauri-build and the CLI read is the same file
    let link = std::fs::read_link(root().join("src-tauri/tauri.conf.json")).unwrap();
    assert_eq!(link, Path::new("../tauri.conf.json"));
}

#[test]
fn identity_and_metadata() {
    let c = conf();
    assert_eq!(c["productName"], "Hermes");
    assert_eq!(c["identifier"], "app.hermes.desktop");
    assert_eq!(c["mainBinaryName"], "hermes-desktop");
    let b = &c["bundle"];
    for k in ["publisher", "copyright", "license", "homepage", "category", "shortDescription", "longDescription"] {
        assert!(b[k].as_str().is_some_and(|s| !s.trim().is_empty()), "bundle.{k} is missing");
    }
    assert!(b.get("fileAssociations").is_none(), "Hermes opens no file types");
    assert_eq!(strings(&c["plugins"]["deep-link"]["desktop"]["schemes"]), ["hermes"]);
    let targets = strings(&b["targets"]);
    for t in ["deb", "rpm", "appimage", "msi", "nsis", "app", "dmg"] {
        assert!(targets.contains(&t), "bundle target {t} missing");
    }
    assert_eq!(c["build"]["frontendDist"], "../ui/dist");
}

fn png_size(p: &Path) -> (u32, u32) {
    let b = std::fs::read(p).unwrap();
    assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n", "{} is not a PNG", p.display());
    let be = |o: usize| u32::from_be_bytes(b[o..o + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn icons_exist_are_generated_sizes_and_have_one_vector_source() {
    let c = conf();
    let icons = strings(&c["bundle"]["icon"]);
    assert!(icons.iter().any(|i| i.ends_with(".icns")) && icons.iter().any(|i| i.ends_with(".ico")));
    for i in &icons {
        let p = from_conf(i);
        assert!(p.is_file(), "{i} does not exist");
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if let Some(dim) = name.strip_suffix(".png").and_then(|n| n.split('@').next()).and_then(|n| n.split_once('x')) {
            let scale = if name.contains("@2x") { 2 } else { 1 };
            let want: u32 = dim.0.parse::<u32>().unwrap() * scale;
            assert_eq!(png_size(&p), (want, want), "{name}");
        }
    }
    // the window/tray icon (the first PNG) is big enough for HiDPI trays and taskbars
    let first = icons.iter().find(|i| i.ends_with(".png")).unwrap();
    assert!(png_size(&from_conf(first)).0 >= 64, "{first} is too small for the window icon");
    let svg = std::fs::read_to_string(root().join("icons/icon.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("viewBox=\"0 0 1024 1024\""));
    assert_eq!(png_size(&root().join("icons/icon.png")), (512, 512));
}

#[test]
fn linux_packages_declare_their_runtime_libraries() {
    let c = conf();
    let linux = &c["bundle"]["linux"];
    // The bundler adds WebKitGTK, GTK and (tray-icon feature) the Ayatana indicator itself; D-Bus (NEEDED by the
    // binary: libdbus-1.so.3), ALSA (libasound.so.2, for voice capture through cpal) and fontconfig (libfontconfig.so.1,
    // src-tauri/src/fonts.rs) are ours to declare.
    // `cargo xtask test` checks the built .deb's Depends against the binary's NEEDED entries.
    let deb = strings(&linux["deb"]["depends"]);
    // screen capture (xcap) links GBM, wayland-client and xcb
    for p in ["libasound2", "libdbus-1-3", "libfontconfig1", "libgbm1", "libwayland-client0", "libxcb1"] {
        assert!(deb.contains(&p), "deb depends lacks {p}");
    }
    // RPM: soname capabilities, which every RPM distribution resolves (package names differ: Fedora alsa-lib,
    // openSUSE libasound2)
    let rpm = strings(&linux["rpm"]["depends"]);
    for p in [
        "libasound.so.2()(64bit)",
        "libdbus-1.so.3()(64bit)",
        "libfontconfig.so.1()(64bit)",
        "libgbm.so.1()(64bit)",
        "libwayland-client.so.0()(64bit)",
        "libxcb.so.1()(64bit)",
    ] {
        assert!(rpm.contains(&p), "rpm depends lacks {p}");
    }
    // agents write emoji (the spec's own clarify card: "✏️ Your own answer"); without a colour emoji font WebKitGTK
    // draws boxes. Recommended, not required: any emoji font will do.
    assert!(strings(&linux["deb"]["recommends"]).contains(&"fonts-noto-color-emoji"));
    assert!(strings(&linux["rpm"]["recommends"]).contains(&"font(notocoloremoji)"));
    for kind in ["deb", "rpm"] {
        let t = linux[kind]["desktopTemplate"].as_str().unwrap();
        let text = std::fs::read_to_string(from_conf(t)).unwrap();
        assert!(text.contains("Exec={{exec}} %u"), "the hermes:// link must reach the app");
        assert!(text.contains("MimeType={{mime_type}}"));
        assert!(text.contains("Categories=Network;Chat;InstantMessaging;"));
    }
    assert_eq!(linux["appimage"]["bundleMediaFramework"], true, "voice playback needs GStreamer in the AppImage");
}

#[test]
fn macos_asks_for_the_microphone_with_a_reason_and_keeps_entitlements_minimal() {
    let c = conf();
    let mac = &c["bundle"]["macOS"];
    assert_eq!(mac["hardenedRuntime"], true);
    assert!(mac["minimumSystemVersion"].as_str().is_some());
    let plist = std::fs::read_to_string(from_conf(mac["infoPlist"].as_str().unwrap())).unwrap();
    let i = plist.find("<key>NSMicrophoneUsageDescription</key>").expect("microphone usage description");
    let reason = plist[i..].split("<string>").nth(1).unwrap().split("</string>").next().unwrap();
    assert!(reason.len() > 30, "a real reason for the microphone prompt: {reason:?}");
    let ent = std::fs::read_to_string(from_conf(mac["entitlements"].as_str().unwrap())).unwrap();
    let keys: Vec<&str> = ent.split("<key>").skip(1).map(|k| k.split("</key>").next().unwrap()).collect();
    assert_eq!(keys, ["com.apple.security.device.audio-input", "com.apple.security.network.client"]);
}

#[test]
fn windows_installers() {
    let c = conf();
    let w = &c["bundle"]["windows"];
    let code = w["wix"]["upgradeCode"].as_str().unwrap();
    let groups: Vec<usize> = code.split('-').map(str::len).collect();
    assert_eq!(groups, [8, 4, 4, 4, 12], "WiX upgrade code must be a fixed GUID: {code}");
    assert_eq!(w["nsis"]["installMode"], "currentUser");
    assert_eq!(w["webviewInstallMode"]["type"], "downloadBootstrapper");
    assert_eq!(w["digestAlgorithm"], "sha256");
}

#[test]
fn updater_has_a_public_key_and_no_insecure_endpoint() {
    let c = conf();
    let u = &c["plugins"]["updater"];
    let key = base64::engine::general_purpose::STANDARD.decode(u["pubkey"].as_str().unwrap()).unwrap();
    let key = String::from_utf8(key).unwrap();
    assert!(key.starts_with("untrusted comment: minisign public key"), "{key}");
    assert!(!key.contains("secret"), "a private key must never be in the config");
    for e in strings(&u["endpoints"]) {
        assert!(e.starts_with("https://"), "insecure update endpoint {e}");
    }
    // local bundles need no private key; the release workflow turns updater artifacts on
    assert_eq!(c["bundle"]["createUpdaterArtifacts"], false);
    // no JS access to the updater plugin: the UI goes through the app's two commands
    let cap = std::fs::read_to_string(root().join("src-tauri/capabilities/main.json")).unwrap();
    assert!(!cap.contains("updater:"));
    let app = std::fs::read_to_string(root().join("src-tauri/permissions/app-commands.toml")).unwrap();
    assert!(app.contains("\"check_for_updates\"") && app.contains("\"install_update\""));
}

#[test]
fn release_workflow_builds_every_installer() {
    let wf = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    assert!(wf.contains("tags: [\"v*\"]") && wf.contains("workflow_dispatch"));
    for b in ["deb,rpm,appimage", "app,dmg", "msi,nsis", "aarch64-apple-darwin", "x86_64-apple-darwin"] {
        assert!(wf.contains(b), "release.yml does not build {b}");
    }
    for s in ["TAURI_SIGNING_PRIVATE_KEY", "APPLE_CERTIFICATE", "APPLE_ID", "WINDOWS_CERTIFICATE"] {
        assert!(wf.contains(&format!("secrets.{s} != ''")), "{s} must be optional (skipped when absent)");
    }
    assert!(wf.contains("--draft"));
}
