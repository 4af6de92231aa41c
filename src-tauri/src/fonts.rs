//! Linux: does CSS `system-ui` name a font that is installed here?
//!
//! WebKitGTK hands each family of a CSS stack to fontconfig, and for every font it creates (each family × size ×
//! weight the page uses) the binding of every family in the list fontconfig's configuration made of the name — ~90
//! families for any sans name on Debian — is checked with one fontconfig match each, against a fresh fontconfig
//! configuration each (`FC_DEBUG=1` shows the matches: ~5,700 in one launch of the app; WebKit's copy of Skia's
//! alias check).
//! `system-ui` becomes "Cantarell, Noto Sans UI, Segoe UI, …" (fontconfig's 60-latin.conf). Where Cantarell is not
//! installed — anywhere but GNOME: other desktops, minimal installs, VMs, containers — WebKit rejects the family it
//! gets for it and asks again with the stack's next family, `sans-serif`: every font is looked up twice. On the bench
//! machine (`cargo xtask bench app` under `perf`) those lookups were ~85 ms of the web process's main thread before
//! the first paint (fontconfig, and libc under it); half of them go away with `system-ui`.
//!
//! The shell asks fontconfig what WebKit will ask, once, on a worker thread at start: which family its configuration
//! puts first for `system-ui`, and which family it matches. Where they differ the page leaves `system-ui` out of its
//! stack (`window.__HERMES_HOST__.uiFontMissing`): WebKit falls through to `sans-serif` there anyway, so the text looks
//! the same.

static UI_FONT_MISSING: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// Keep the start-up probe's answer for the windows opened later (the detached avatar).
pub fn remember(missing: bool) {
    let _ = UI_FONT_MISSING.set(missing);
}

/// The start-up probe's answer (`false` before it or when it could not tell).
pub fn remembered() -> bool {
    UI_FONT_MISSING.get().copied().unwrap_or(false)
}

/// What fontconfig makes of the family `family`: the family its configuration puts first, and the family of the font
/// it matches. `None` when fontconfig cannot start or has no font at all.
#[cfg(target_os = "linux")]
pub fn resolve(family: &str) -> Option<(String, String)> {
    use fontconfig::{FC_FAMILY, Fontconfig, Pattern};
    let fc = Fontconfig::new()?;
    let name = std::ffi::CString::new(family).ok()?;
    // (the crate's match would dereference fontconfig's "no match" — no font at all — so make sure there is one)
    fontconfig::list_fonts(&Pattern::new(&fc), None).iter().next()?;
    let mut configured = Pattern::new(&fc);
    configured.add_string(FC_FAMILY, &name);
    configured.config_substitute();
    configured.default_substitute();
    let first = configured.get_string(FC_FAMILY)?.to_string();
    let mut wanted = Pattern::new(&fc);
    wanted.add_string(FC_FAMILY, &name);
    let matched = wanted.font_match().get_string(FC_FAMILY)?.to_string();
    Some((first, matched))
}

#[cfg(not(target_os = "linux"))]
pub fn resolve(_family: &str) -> Option<(String, String)> {
    None
}

/// True when fontconfig matched another family than the one its configuration put first (WebKit then rejects the
/// match and asks for the stack's next family).
pub fn falls_back(resolution: Option<&(String, String)>) -> bool {
    resolution.is_some_and(|(first, matched)| !first.trim().eq_ignore_ascii_case(matched.trim()))
}

/// The start-up probe: is the font `system-ui` names missing here? (Linux; `false` elsewhere or when unknown.)
/// Reads fontconfig's configuration and font list: off the main thread.
pub fn ui_font_missing() -> bool {
    let r = resolve("system-ui");
    let missing = falls_back(r.as_ref());
    if let Some((first, matched)) = &r {
        tracing::info!(%first, %matched, missing, "the system-ui font");
    }
    missing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn falls_back_when_the_match_is_another_family() {
        let r = |a: &str, b: &str| Some((a.to_string(), b.to_string()));
        assert!(falls_back(r("Cantarell", "DejaVu Sans").as_ref()));
        assert!(!falls_back(r("Cantarell", "cantarell").as_ref()));
        assert!(!falls_back(r("Noto Sans", "Noto Sans").as_ref()));
        assert!(!falls_back(None));
    }

    /// Against this machine's real fontconfig: a made-up family falls back, an installed one resolves to itself.
    #[test]
    fn fontconfig_resolves_installed_and_missing_families() {
        if !cfg!(target_os = "linux") {
            return;
        }
        let missing = resolve("No Such Family Hermes").expect("fontconfig answers");
        assert_eq!(missing.0, "No Such Family Hermes");
        assert!(falls_back(Some(&missing)), "{missing:?}");
        // whatever sans-serif matches here is an installed family, which resolves to itself
        let sans = resolve("sans-serif").expect("fontconfig answers").1;
        let installed = resolve(&sans).expect("fontconfig answers");
        assert!(!falls_back(Some(&installed)), "{installed:?}");
        // and the probe agrees with what fontconfig says of system-ui here
        assert_eq!(ui_font_missing(), falls_back(resolve("system-ui").as_ref()));
    }
}
