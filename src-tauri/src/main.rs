// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // First, while the process has one thread: how WebKit draws without a GPU (gpu.rs).
    hermes_desktop::gpu::apply();
    let args: Vec<String> = std::env::args().skip(1).collect();
    // A standby waits here, loaded, for the command line of the Show that wakes it (standby.rs).
    #[cfg(target_os = "linux")]
    let args = hermes_desktop::standby::wait_if_standby(args);
    // (then, without a GPU, Mesa's driver loads on a thread of its own while GTK starts)
    hermes_desktop::gpu::warm_up_gl_driver();
    if let Some(i) = args.iter().position(|a| a == "--export-bindings") {
        let Some(path) = args.get(i + 1) else {
            eprintln!("usage: hermes-desktop --export-bindings <file.ts>");
            std::process::exit(2)
        };
        match hermes_desktop::bindings() {
            Ok(text) => {
                if let Err(e) = std::fs::write(path, text) {
                    eprintln!("cannot write {path}: {e}");
                    std::process::exit(1)
                }
            }
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1)
            }
        }
        return;
    }
    hermes_desktop::run(hermes_desktop::Options::from_args(&args));
}
