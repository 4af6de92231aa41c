//! The system's permission to read the screen. Only macOS has one (Privacy & Security → Screen Recording); every
//! other system answers [`Access::Granted`] (a Wayland desktop asks in its portal dialog at capture time instead:
//! a refusal then comes back as [`crate::CaptureError::Denied`]).

/// Whether we may read the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    Granted,
    Denied,
    /// The system cannot say.
    Unknown,
}

/// The current answer, without asking the user.
pub fn check() -> Access {
    imp::preflight()
}

/// Asks the user when the system has not asked yet (macOS shows its dialog once; later calls only answer), and
/// returns the answer as it stands now. On macOS a grant often takes effect only after the app restarts.
pub fn request() -> Access {
    imp::request()
}

#[cfg(target_os = "macos")]
use crate::macos as imp;

#[cfg(not(target_os = "macos"))]
mod imp {
    use super::Access;

    pub(super) fn preflight() -> Access {
        Access::Granted
    }

    pub(super) fn request() -> Access {
        Access::Granted
    }
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(not(target_os = "macos"))]
    fn granted_where_there_is_no_permission() {
        assert_eq!(super::check(), super::Access::Granted);
        assert_eq!(super::request(), super::Access::Granted);
    }
}
