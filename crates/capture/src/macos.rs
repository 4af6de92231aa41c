//! The macOS screen-recording permission (CoreGraphics, macOS 10.15 and later).

use objc2_core_graphics::{CGPreflightScreenCaptureAccess, CGRequestScreenCaptureAccess};

use crate::permission::Access;

pub(crate) fn preflight() -> Access {
    if CGPreflightScreenCaptureAccess() { Access::Granted } else { Access::Denied }
}

pub(crate) fn request() -> Access {
    if CGRequestScreenCaptureAccess() { Access::Granted } else { Access::Denied }
}
