//! Adapter decoders on arbitrary input: never panic; whatever decodes re-encodes to something that decodes to the
//! same frame (exactly, for every frame without free-form JSON values).
#![no_main]

use hermes_protocol::adapter::{self, Down};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        // the session sees text frames only, but lossy input must not panic either
        let lossy = String::from_utf8_lossy(data);
        let _ = adapter::decode_down(&lossy);
        let _ = adapter::decode_up(&lossy);
        return;
    };
    if let Ok(down) = adapter::decode_down(text) {
        let again = adapter::decode_down(&adapter::encode(&down)).expect("an encoded Down decodes");
        // `ready.capabilities` holds arbitrary JSON (floats may be re-rounded by serde_json): compare the rest
        if !matches!(down, Down::Ready { .. }) {
            assert_eq!(again, down);
        }
    }
    if let Ok(up) = adapter::decode_up(text) {
        let again = adapter::decode_up(&adapter::encode(&up)).expect("an encoded Up decodes");
        assert_eq!(again, up);
    }
});
