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
//!
//! Without a GPU, loading Mesa's software driver (`swrast_dri.so` and LLVM, ~140 MB of libraries: ~11 ms here, ~36 ms
//! once the page cache has let them go) is also the largest single cost of the window's start, and it was paid on the
//! main thread first: GDK probes GLX as it opens the display (for visuals only GL would use), then WebKit creates its
//! EGL display as the webview loads its page (required: its web process aborts without one). So in that case GDK's GL
//! is switched off too (`GDK_GL=disable`: with compositing off nothing in these processes draws with GL; never over a
//! value the user set), and [`warm_up_gl_driver`] loads the driver through EGL on a thread of its own while GTK starts,
//! so that WebKit finds it loaded.

use std::path::Path;
use std::sync::OnceLock;

static DECISION: OnceLock<Compositing> = OnceLock::new();

pub const ENV: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";

/// GDK's GL switch (GTK 3: `GDK_GL=disable` makes GDK skip GLX).
pub const GDK_GL: &str = "GDK_GL";

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
        for (name, value) in variables(d, std::env::var_os(GDK_GL).is_some()) {
            // SAFETY: called at the start of `main`, while the process has a single thread (nothing reads the
            // environment concurrently).
            unsafe { std::env::set_var(name, value) };
        }
        d
    })
}

/// The variables [`apply`] sets for a decision: compositing off without a GPU, and GDK's GL with it unless the user
/// set `GDK_GL`.
pub fn variables(d: Compositing, user_set_gdk_gl: bool) -> Vec<(&'static str, &'static str)> {
    match d {
        Compositing::DisabledNoGpu if user_set_gdk_gl => vec![(ENV, "1")],
        Compositing::DisabledNoGpu => vec![(ENV, "1"), (GDK_GL, "disable")],
        Compositing::Default | Compositing::UserChoice => Vec::new(),
    }
}

/// Without a GPU (after [`apply`]): loads Mesa's driver through EGL on a thread of its own, while GTK starts on the
/// main thread, so that WebKit's EGL display finds it loaded (module docs). The display stays initialised (never
/// terminated: that would unload the driver again). Anywhere else, or if EGL is missing, it does nothing.
pub fn warm_up_gl_driver() {
    #[cfg(target_os = "linux")]
    if decision() == Some(Compositing::DisabledNoGpu) {
        let spawned = std::thread::Builder::new().name("hermes-gl-warm".into()).spawn(egl::initialise_a_display);
        if let Err(e) = spawned {
            tracing::warn!("cannot start the GL driver's warm-up: {e}");
        }
    }
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // libEGL's C entry points, loaded at run time
mod egl {
    use std::ffi::c_void;
    use std::ptr::{null, null_mut};

    /// `EGL_PLATFORM_SURFACELESS_MESA`: a display with no window system (no X connection of its own).
    const PLATFORM_SURFACELESS_MESA: u32 = 0x31DD;

    type GetPlatformDisplay = unsafe extern "C" fn(u32, *mut c_void, *const isize) -> *mut c_void;
    type Initialize = unsafe extern "C" fn(*mut c_void, *mut i32, *mut i32) -> u32;

    pub fn initialise_a_display() {
        // SAFETY: libEGL.so.1 (glvnd, or Mesa's own) is the system's EGL; the two entry points are EGL 1.5's, called
        // with their C signatures and valid arguments (no native display, no attributes, no version out-params).
        // The library is kept loaded for the process's life (forgotten), as the display it made is.
        unsafe {
            let Ok(lib) = libloading::Library::new("libEGL.so.1") else { return };
            let (Ok(get), Ok(init)) =
                (lib.get::<GetPlatformDisplay>(b"eglGetPlatformDisplay\0"), lib.get::<Initialize>(b"eglInitialize\0"))
            else {
                return;
            };
            let display = get(PLATFORM_SURFACELESS_MESA, null_mut(), null());
            let ok = !display.is_null() && init(display, null_mut(), null_mut()) != 0;
            tracing::debug!(ok, "GL driver loaded ahead of the webview");
            std::mem::forget(lib);
        }
    }
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
    fn gdk_gl_goes_off_with_compositing_and_never_over_the_user() {
        use Compositing::*;
        assert_eq!(variables(DisabledNoGpu, false), vec![(ENV, "1"), (GDK_GL, "disable")]);
        assert_eq!(variables(DisabledNoGpu, true), vec![(ENV, "1")]);
        assert!(variables(Default, false).is_empty());
        assert!(variables(UserChoice, false).is_empty());
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
