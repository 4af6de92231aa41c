//! Record from a microphone: `cargo run -p hermes-voice --features capture --example record -- [seconds] [device] > out.wav`
//! `--list` lists input devices.

use std::io::Write;
use std::time::Duration;

use hermes_voice::capture::{CaptureEvent, Recorder, list_input_devices};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--list") {
        for d in list_input_devices()? {
            println!("{}{}  [{}]", if d.is_default { "* " } else { "  " }, d.name, d.id);
        }
        return Ok(());
    }
    let secs: f64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let device = args.get(1).map(String::as_str);
    let rec = Recorder::new()
        .on_event(|e| match e {
            CaptureEvent::Level(l) => eprint!("\r{:<40}", "#".repeat((l * 40.0) as usize)),
            other => eprintln!("\n{other:?}"),
        })
        .start(device)?;
    std::thread::sleep(Duration::from_secs_f64(secs));
    let wav = rec.stop()?;
    eprintln!("\n{} bytes", wav.len());
    std::io::stdout().write_all(&wav)?;
    Ok(())
}
