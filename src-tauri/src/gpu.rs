//! Linux: how WebKitGTK draws on a machine without a GPU.
//!
//! WebKitGTK composites the page with OpenGL. Where there is no GPU (virtual machines, remote desktops, CI), that GL is
//! Mesa's software rasteriser (llvmpipe): measured here (`cargo xtask bench app`), the app then drew a streamed reply
//! at ~5 frames a second, its web process held ~150 MB more than without compositing, and the window took ~0.15 s
//! longer to become interactive (llvmpipe compiles shaders at start). WebKit's non-composited mode paints with its
//! CPU renderer instead: ~50 frames a second while streaming, less memory, faster start. Many WebKitGTK apps set
//! `WEBKIT_DISABLE_COMPOSITING_MODE=1` everywhere; this sets it only when the machine has no DRM render node
//! (`/dev/dri/renderD*`: no GPU driver), and never over a value the user chose — `WEBKIT_DISABLE_COMPOSITING_MODE=0`
//! keeps compositing on.

use std::path::Path;
use std::sync::OnceLock;

static DECISION: OnceLock<Compositing> = OnceLock::new();

pub const ENV: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";

/// What [`apply`] decided, for the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compositing {
    /// A GPU is there (or not Linux): WebKit's default.
    Default,
    /// The user set the variable: left as it is.
    UserChoice,
    /// No GPU: compositing switched off.
    DisabledNoGpu,
}

/// True when `dri` (normally `/dev/dri`) holds a render node (`renderD128`, …).
pub fn has_render_node(dri: &Path) -> bool {
    std::fs::read_dir(dri)
        .map(|d| d.flatten().any(|e| e.file_name().to_string_lossy().starts_with("renderD")))
        .unwrap_or(false)
}

/// The decision, pure: whether the user set the variable, and whether a render node exists.
pub fn decide(user_set: bool, render_node: bool) -> Compositing {
    if user_set {
        Compositing::UserChoice
    } else if render_node {
        Compositing::Default
    } else {
        Compositing::DisabledNoGpu
    }
}

/// Decide and set the variable. Call first in `main`, before any thread exists and before GTK starts.
#[allow(unsafe_code)] // `set_var` (see SAFETY below)
pub fn apply() -> Compositing {
    *DECISION.get_or_init(|| {
        if !cfg!(target_os = "linux") {
            return Compositing::Default;
        }
        let d = decide(std::env::var_os(ENV).is_some(), has_render_node(Path::new("/dev/dri")));
        if d == Compositing::DisabledNoGpu {
            // SAFETY: called at the start of `main`, while the process has a single thread (nothing reads the
            // environment concurrently).
            unsafe { std::env::set_var(ENV, "1") };
        }
        d
    })
}

/// What [`apply`] decided (`None`: it was not called, e.g. in tests).
pub fn decision() -> Option<Compositing> {
    DECISION.get().copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_without_a_gpu_and_never_over_the_user() {
        assert_eq!(decide(false, false), Compositing::DisabledNoGpu);
        assert_eq!(decide(false, true), Compositing::Default);
        assert_eq!(decide(true, false), Compositing::UserChoice);
        assert_eq!(decide(true, true), Compositing::UserChoice);
    }

    #[test]
    fn render_nodes_are_found_by_name() {
        let d = tempfile::tempdir().unwrap();
        assert!(!has_render_node(d.path()));
        assert!(!has_render_node(&d.path().join("missing")));
        std::fs::write(d.path().join("card0"), b"").unwrap();
        assert!(!has_render_node(d.path()), "a card node alone (display only) is no render node");
        std::fs::write(d.path().join("renderD128"), b"").unwrap();
        assert!(has_render_node(d.path()));
    }
}
