mod audio_features;
mod audio_manager;
mod definitions;
mod devices_info;
mod utils;

pub use self::definitions::*;
