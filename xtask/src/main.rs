//! Project tasks: `cargo xtask test` (every test, installing what it needs) and `cargo xtask run` (the app on the
//! built-in demo agent). No dependencies: it must build in seconds on a fresh machine.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

/// Debian packages the tests need (build headers, the virtual microphone, speech for test audio).
const APT_TEST: &[&str] = &[
    "pkg-config",
    "libasound2-dev",
    "pulseaudio",
    "pulseaudio-utils",
    "libasound2-plugins",
    "alsa-utils",
    "espeak-ng",
    "sox",
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = root();
    let res = match args.first().map(String::as_str) {
        Some("test") => test(&root, &args[1..]),
        Some("run") => run(&root, &args[1..]),
        Some("deps") => ensure_apt(APT_TEST),
        _ => {
            eprintln!(
                "usage: cargo xtask <test|run|deps>\n  test [--quick]  every test of the repository\n  run             the app on the built-in demo agent"
            );
            Err("unknown task".into())
        }
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."))
}

type R = Result<(), String>;

fn sh(cmd: &mut Command) -> R {
    let shown = format!("{cmd:?}");
    eprintln!("\n==> {}", shown.replace('"', ""));
    let t = Instant::now();
    let status = cmd.status().map_err(|e| format!("cannot run {shown}: {e}"))?;
    eprintln!("<== {:.1} s", t.elapsed().as_secs_f64());
    if status.success() { Ok(()) } else { Err(format!("failed ({status}): {shown}")) }
}

fn have(bin: &str) -> bool {
    Command::new("sh").arg("-c").arg(format!("command -v {bin} >/dev/null 2>&1")).status().is_ok_and(|s| s.success())
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0").unwrap_or(false)
}

/// Install missing Debian/Ubuntu packages (with sudo when not root); elsewhere, say what is missing.
fn ensure_apt(pkgs: &[&str]) -> R {
    if !Path::new("/usr/bin/dpkg-query").exists() {
        eprintln!(
            "xtask: not a Debian/Ubuntu system: install the equivalents of these packages yourself: {}",
            pkgs.join(" ")
        );
        return Ok(());
    }
    let missing: Vec<&str> = pkgs
        .iter()
        .copied()
        .filter(|p| {
            let out = Command::new("dpkg-query").args(["-W", "-f=${Status}", p]).output();
            !out.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    eprintln!("xtask: installing Debian packages: {}", missing.join(" "));
    let sudo: &[&str] = if is_root() { &[] } else { &["sudo"] };
    let apt = |args: &[&str]| {
        let mut all: Vec<&str> = sudo.to_vec();
        all.push("apt-get");
        all.extend_from_slice(args);
        let mut c = Command::new(all[0]);
        c.args(&all[1..]).env("DEBIAN_FRONTEND", "noninteractive");
        c
    };
    sh(&mut apt(&["update", "-qq"]))?;
    let mut install = vec!["install", "-y", "-qq", "--no-install-recommends"];
    install.extend(missing.iter().copied());
    sh(&mut apt(&install))
}

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

fn test(root: &Path, args: &[String]) -> R {
    let quick = args.iter().any(|a| a == "--quick");
    let t = Instant::now();
    ensure_apt(APT_TEST)?;
    sh(cargo().current_dir(root).args(["fmt", "--all", "--check"]))?;
    sh(cargo().current_dir(root).args(["clippy", "--workspace", "--all-targets", "--locked", "--", "-D", "warnings"]))?;
    sh(cargo()
        .current_dir(root)
        .args(["test", "--workspace", "--all-targets", "--locked"])
        .env("HERMES_REQUIRE_AUDIO", std::env::var("HERMES_REQUIRE_AUDIO").unwrap_or_else(|_| "1".into())))?;
    sh(cargo().current_dir(root).args(["test", "--workspace", "--doc", "--locked"]))?;
    if root.join("ui/package.json").exists() {
        ui_tests(root)?;
    }
    if !quick && root.join("fuzz/run.sh").exists() {
        fuzz_smoke(root)?;
    }
    eprintln!("\nxtask: all tests passed in {:.0} s", t.elapsed().as_secs_f64());
    Ok(())
}

fn npm(root: &Path, args: &[&str]) -> R {
    sh(Command::new("npm").current_dir(root.join("ui")).args(args))
}

fn ui_tests(root: &Path) -> R {
    if !have("npm") {
        return Err("npm is missing: install Node.js 20 and npm".into());
    }
    npm(root, &["ci", "--no-audit", "--no-fund"])?;
    npm(root, &["run", "check"])?;
    npm(root, &["test"])?;
    npm(root, &["run", "build"])
}

/// Build every fuzz target and run each briefly (the long runs are local; see fuzz/README).
fn fuzz_smoke(root: &Path) -> R {
    if !have("cargo-fuzz") {
        sh(cargo().args(["install", "cargo-fuzz", "--locked"]))?;
    }
    let secs = std::env::var("HERMES_FUZZ_SECONDS").unwrap_or_else(|_| "20".into());
    let out = Command::new("sh")
        .current_dir(root.join("fuzz"))
        .arg("-c")
        .arg("RUSTC_BOOTSTRAP=1 cargo fuzz list")
        .output()
        .map_err(|e| e.to_string())?;
    let targets: Vec<String> =
        String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).filter(|l| !l.is_empty()).collect();
    if targets.is_empty() {
        return Err("no fuzz targets found".into());
    }
    for t in targets {
        sh(Command::new("bash").current_dir(root).args(["fuzz/run.sh", &t, &secs]))?;
    }
    Ok(())
}

fn run(root: &Path, _args: &[String]) -> R {
    // Until the desktop app lands: the reference agent on loopback and the terminal client talking to it.
    sh(cargo().current_dir(root).args(["build", "-p", "hermes-devserver", "-p", "hermes-chat"]))?;
    let target = std::env::var("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|_| root.join("target"));
    let bin = |n: &str| target.join("debug").join(n);
    let token = "hermes-demo-token";
    let mut server = Command::new(bin("hermes-devserver"))
        .args(["--bind", "127.0.0.1:8787", "--token", token])
        .spawn()
        .map_err(|e| format!("cannot start the demo agent: {e}"))?;
    std::thread::sleep(std::time::Duration::from_millis(500));
    let data = std::env::temp_dir().join("hermes-demo");
    let status = Command::new(bin("hermes-chat"))
        .args(["--url", "ws://127.0.0.1:8787/ws", "--device-id", "desktop-demo", "--data-dir"])
        .arg(&data)
        .env("HERMES_TOKEN", token)
        .status();
    let _ = server.kill();
    let _ = server.wait();
    status.map_err(|e| e.to_string()).and_then(|s| if s.success() { Ok(()) } else { Err(format!("hermes-chat: {s}")) })
}
