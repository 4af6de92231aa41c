//! Security sanity of the shipped configuration: CSP, capabilities, app manifest. Parsed from the real files.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn conf() -> Value {
    json(&root().join("tauri.conf.json"))
}

#[test]
fn csp_is_strict() {
    let c = conf();
    let sec = &c["app"]["security"];
    let csp = sec["csp"].as_object().expect("csp as a directive map");
    let get = |k: &str| csp.get(k).and_then(Value::as_str).unwrap_or_else(|| panic!("missing {k}"));
    assert_eq!(get("default-src"), "'self'");
    assert_eq!(get("script-src"), "'self'", "no inline or eval scripts");
    assert_eq!(get("object-src"), "'none'");
    assert_eq!(get("base-uri"), "'none'");
    assert_eq!(get("connect-src"), "ipc: http://ipc.localhost");
    let allowed_hosts = ["http://ipc.localhost", "http://asset.localhost"];
    for (k, v) in csp {
        let v = v.as_str().unwrap();
        assert!(!v.contains("unsafe-eval"), "{k}: unsafe-eval");
        assert!(!v.contains('*'), "{k}: wildcard source");
        for src in v.split_whitespace() {
            if src.starts_with("http") || src.starts_with("ws") {
                assert!(allowed_hosts.contains(&src), "{k}: remote source {src}");
            }
            assert!(!src.starts_with("https:") && src != "http:" && src != "ws:" && src != "wss:", "{k}: {src}");
        }
    }
    assert_eq!(c["app"]["withGlobalTauri"], Value::Bool(false));
    // Tauri adds nonces to the directives it modifies; a nonce would void style-src 'unsafe-inline' (Svelte sets style
    // attributes). Only style-src is exempt: script-src keeps Tauri's hashes and nonces.
    assert_eq!(sec["dangerousDisableAssetCspModification"], serde_json::json!(["style-src"]));
    // the asset protocol is scoped at runtime to the media folder: nothing in the static scope
    let scope = &sec["assetProtocol"]["scope"];
    assert_eq!(scope["allow"], serde_json::json!([]), "asset scope must be empty in the config");
}

#[test]
fn the_window_is_created_by_the_app_with_its_guard() {
    let c = conf();
    let w = &c["app"]["windows"][0];
    assert_eq!(w["label"], "main");
    assert_eq!(w["create"], Value::Bool(false), "created in setup() with the navigation guard");
    assert!(w["minWidth"].as_f64().unwrap() >= 900.0 && w["minHeight"].as_f64().unwrap() >= 600.0);
    assert!(w.get("url").is_none(), "the window loads the bundled UI only");
}

/// A shipped build freezes the built-in prototypes, has no WebDriver dialog answers compiled in, and every window it
/// creates refuses to open another.
#[test]
fn security_settings_of_a_shipped_build() {
    assert_eq!(conf()["app"]["security"]["freezePrototype"], Value::Bool(true));
    let src = |f: &str| std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(f)).unwrap();
    // the one function that reads the e2e dialog variables exists in debug builds only; the release one answers None
    let commands = src("commands/files.rs");
    let debug = commands.find("#[cfg(debug_assertions)]\nfn e2e_dialog_override").expect("a debug-only override");
    let release = commands.find("#[cfg(not(debug_assertions))]\nfn e2e_dialog_override").expect("a release stub");
    let stub = &commands[release..];
    let stub = &stub[..stub.find("\n}\n").unwrap()];
    assert!(stub.contains("None") && !stub.contains("env::"), "{stub}");
    assert_eq!(commands.matches("TAURI_WEBVIEW_AUTOMATION\")").count(), 1);
    assert!(commands[debug..].find("TAURI_WEBVIEW_AUTOMATION").unwrap() < 200);
    // every window builder denies new windows
    for f in ["lib.rs", "avatar.rs"] {
        let s = src(f);
        let builders =
            s.matches("WebviewWindowBuilder::new(").count() + s.matches("WebviewWindowBuilder::from_config(").count();
        assert!(builders > 0, "{f}");
        assert_eq!(
            s.matches(".on_new_window(security::deny_new_window)").count()
                + s.matches(".on_new_window(crate::security::deny_new_window)").count(),
            builders,
            "{f}"
        );
    }
}

/// The commands the main window may call: the app permission build.rs generates from `collect_commands!`.
fn manifest_commands() -> BTreeSet<String> {
    let perm = std::fs::read_to_string(root().join("src-tauri/permissions/app-commands.toml")).unwrap();
    assert!(perm.contains("identifier = \"app-commands\""), "{perm}");
    let start = perm.find("commands.allow = [").unwrap();
    let end = start + perm[start..].find(']').unwrap();
    perm[start..end].split('"').skip(1).step_by(2).map(str::to_string).collect()
}

#[test]
fn capabilities_are_narrow() {
    let dir = root().join("src-tauri/capabilities");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let names: Vec<_> = files.iter().map(|f| f.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["avatar-window.json", "main.json", "quick.json"], "capability files");
    // the detached bundled avatar may only drag its window; the remote avatar (`avatar-remote`) matches none.
    let avatar = json(&dir.join("avatar-window.json"));
    assert_eq!(avatar["webviews"], serde_json::json!(["avatar"]));
    assert!(avatar.get("windows").is_none() && avatar.get("remote").is_none());
    assert_eq!(avatar["permissions"], serde_json::json!(["core:window:allow-start-dragging"]));
    let cap = json(&dir.join("main.json"));
    assert_eq!(cap["windows"], serde_json::json!(["main"]));
    assert!(cap.get("remote").is_none(), "no remote origin gets IPC");
    assert!(cap.get("webviews").is_none());
    let perms: Vec<&str> = cap["permissions"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    for p in &perms {
        assert!(!p.contains('*'), "wildcard permission {p}");
        assert!(!p.ends_with(":default") && *p != "core:default", "broad default set {p}");
        assert!(!p.contains("allow-all") && !p.contains("-all"), "broad permission {p}");
        assert!(!p.starts_with("fs:") && !p.starts_with("shell:") && !p.starts_with("http:"), "{p}");
    }
    // the app's commands through its one generated permission, and event listening (drops, deep links): nothing else
    assert_eq!(perms, ["core:event:allow-listen", "core:event:allow-unlisten", "app-commands"]);
    assert!(manifest_commands().len() > 40, "the permission lists the commands: {:?}", manifest_commands());
    // the Quick Ask panel: the app's own page, so the same as the main window, plus dragging its frameless window
    let quick = json(&dir.join("quick.json"));
    assert_eq!(quick["windows"], serde_json::json!(["quick"]));
    assert!(quick.get("remote").is_none() && quick.get("webviews").is_none());
    assert_eq!(
        quick["permissions"],
        serde_json::json!([
            "core:event:allow-listen",
            "core:event:allow-unlisten",
            "core:window:allow-start-dragging",
            "app-commands"
        ])
    );
}

#[test]
fn every_command_is_in_the_manifest_and_the_bindings() {
    let bindings = hermes_desktop::bindings().unwrap();
    for c in manifest_commands() {
        assert!(bindings.contains(&format!("TAURI_INVOKE(\"{c}\"")), "{c} missing from the bindings");
    }
    let n = bindings.matches("TAURI_INVOKE(\"").count();
    assert_eq!(n, manifest_commands().len(), "a command is exported but not permissioned (or the reverse)");
}

#[test]
fn bindings_are_fresh() {
    let path = root().join("ui/src/bindings.ts");
    let now = hermes_desktop::bindings().unwrap();
    if std::env::var_os("HERMES_WRITE_BINDINGS").is_some() {
        std::fs::write(&path, &now).unwrap();
        return;
    }
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(old == now, "ui/src/bindings.ts is stale: run `cargo xtask bindings`");
}
