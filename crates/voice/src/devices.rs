//! The microphones: which inputs there are, the default one, the output's monitor (the echo canceller's reference),
//! and finding the one a recording asks for — on the audio host the capture uses.

use cpal::traits::{DeviceTrait, HostTrait};

use crate::capture::CaptureError;

/// An input device as shown to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputDevice {
    /// Human-readable name (cpal's description); pass it to [`crate::capture::Recorder::start`].
    pub name: String,
    /// Backend id (e.g. `alsa:default`); also accepted by [`crate::capture::Recorder::start`].
    pub id: String,
    /// The system's default input.
    pub is_default: bool,
}

/// The audio host: on Linux the native PulseAudio protocol when a server (PulseAudio or PipeWire's pipewire-pulse)
/// is reachable, else ALSA. Through ALSA's PulseAudio plugin, cpal's capture thread busy-polls (the plugin's poll fd
/// wakes it before a full period is available): ~45 % of a core measured, against ~1 % over the native protocol.
fn host() -> cpal::Host {
    #[cfg(target_os = "linux")]
    if let Ok(h) = cpal::host_from_id(cpal::HostId::PulseAudio) {
        return h;
    }
    cpal::default_host()
}

/// Name of the audio host in use (`PulseAudio` or `ALSA` on Linux).
pub fn host_name() -> &'static str {
    host().id().name()
}

/// List input devices (sources; on PulseAudio this includes monitors of outputs).
pub fn list_input_devices() -> Result<Vec<InputDevice>, CaptureError> {
    let host = host();
    let default_id = host.default_input_device().and_then(|d| d.id().ok()).map(|id| id.to_string());
    let devices = host.input_devices().map_err(|e| CaptureError::Open(e.to_string()))?;
    Ok(devices
        .map(|d| {
            let id = d.id().map(|i| i.to_string()).unwrap_or_default();
            let name = d.description().map(|x| x.name().to_string()).unwrap_or_else(|_| id.clone());
            InputDevice { is_default: default_id.as_deref() == Some(id.as_str()), name, id }
        })
        .collect())
}

/// The backend's id of the system's default input now (`None`: there is none).
pub fn default_input_id() -> Option<String> {
    default_input_id_in(&host())
}

pub(crate) fn default_input_id_in(host: &cpal::Host) -> Option<String> {
    host.default_input_device()?.id().ok().map(|i| i.to_string())
}

/// Is the device `want` (as [`crate::capture::Recorder::start`] takes it) connected? `None`: the host could not tell.
pub(crate) fn device_present_in(host: &cpal::Host, want: &str) -> Option<bool> {
    match find_device_in(host, Some(want)) {
        Ok(_) => Some(true),
        Err(CaptureError::DeviceNotFound(_)) => Some(false),
        Err(_) => None,
    }
}

/// The audio host, for a caller that asks it many questions ([`crate::live`]): one connection, not one a call.
pub(crate) fn shared_host() -> cpal::Host {
    host()
}

/// The input that hears what this machine plays: the monitor of the default output, as PulseAudio (and PipeWire's
/// PulseAudio server) offer one for every output. The echo canceller's reference while read-aloud plays. `None` on
/// other hosts (ALSA alone; macOS and Windows have no such input: there the canceller stays off).
pub fn playback_monitor() -> Option<String> {
    let host = host();
    let out = host.default_output_device()?.id().ok()?.to_string();
    if !out.starts_with("pulseaudio:") {
        return None;
    }
    let want = format!("{out}.monitor");
    host.input_devices().ok()?.filter_map(|d| d.id().ok().map(|i| i.to_string())).find(|id| *id == want)
}

pub(crate) fn find_device(name: Option<&str>) -> Result<(cpal::Device, cpal::HostId), CaptureError> {
    let host = host();
    let id = host.id();
    find_device_in(&host, name).map(|d| (d, id))
}

pub(crate) fn find_device_in(host: &cpal::Host, name: Option<&str>) -> Result<cpal::Device, CaptureError> {
    let Some(want) = name.filter(|n| !n.is_empty()) else {
        return host.default_input_device().ok_or(CaptureError::NoDevice);
    };
    let devices: Vec<cpal::Device> = host.input_devices().map_err(|e| CaptureError::Open(e.to_string()))?.collect();
    let label = |d: &cpal::Device| d.description().map(|x| x.name().to_string()).unwrap_or_default();
    let id = |d: &cpal::Device| d.id().map(|i| i.to_string()).unwrap_or_default();
    let lower = want.to_lowercase();
    let pos = devices
        .iter()
        .position(|d| label(d) == want || id(d) == want)
        .or_else(|| devices.iter().position(|d| label(d).to_lowercase().contains(&lower)));
    pos.map(|i| devices.into_iter().nth(i).expect("index from position"))
        .ok_or_else(|| CaptureError::DeviceNotFound(want.to_string()))
}
