//! A compromised page cannot read, send or run a file by naming its path, through the real app (WebKitWebDriver,
//! Xvfb; see e2e.rs): a script in the page calls the shell's commands itself (`__TAURI_INTERNALS__.invoke`, as an
//! injected script would) with a private key under the app's `HOME` and a `.bat` in the app's temp folder, and every
//! call is refused with `file_not_granted`; the agent never gets the key. The same app still sends a file the user
//! attached (the file dialog's answer, a token) byte for byte. Drops and pastes: e2e_dnd.rs. Skipped unless
//! `HERMES_E2E=1` (`cargo xtask e2e e2e_grants`). Screenshot: `target/e2e-screens/grants-refused.png`.

mod wd;

use serde_json::{Value, json};
use wd::Driver;
use wd::app::*;

const KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAgrants-e2e-secret-key-material\n-----END OPENSSH PRIVATE KEY-----\n";

/// Every command that takes a file, called by the page with raw paths: each answer's error code (or `"ok"`).
const PROBE: &str = r#"
const [pid, key, bat] = arguments;
return (async () => {
const I = window.__TAURI_INTERNALS__;
const code = (p) => p.then(() => 'ok', (e) => (e && e.code) || String(e));
const out = {};
out.send_file = await code(I.invoke('send_command', {profileId: pid, command: {cmd: 'file', path: key}}));
out.send_file_tilde = await code(I.invoke('send_command', {profileId: pid, command: {cmd: 'file', path: '~/.ssh/id_ed25519'}}));
out.send_audio = await code(I.invoke('send_command', {profileId: pid, command: {cmd: 'audio', path: key}}));
out.file_info = await code(I.invoke('file_info', {token: key}));
out.file_url = await code(I.invoke('file_url', {token: key}));
out.downscale_image = await code(I.invoke('downscale_image', {token: key, maxBytes: 10}));
out.save_file_as = await code(I.invoke('save_file_as', {token: key}));
out.open_bat = await code(I.invoke('open_file', {token: bat}));
out.reveal_bat = await code(I.invoke('reveal_file', {token: bat}));
out.file_type_bat = await code(I.invoke('file_type', {token: bat}));
out.made_up = await code(I.invoke('file_info', {token: 'hfile:0123456789abcdef0123456789abcdef/id_ed25519'}));
// a program the page writes itself gets a token, which the OS is never handed
const pasted = await I.invoke('write_temp_file', {filename: 'run.bat', base64: btoa('@echo off\r\ncalc.exe\r\n')});
out.pasted_is_token = String(pasted).startsWith('hfile:') && !String(pasted).includes('/tmp/');
out.open_pasted = await code(I.invoke('open_file', {token: pasted}));
out.reveal_pasted = await code(I.invoke('reveal_file', {token: pasted}));
// the screen: only the Quick Ask panel's page captures (its buttons and the shortcut), not this one
out.capture_screen = await code(I.invoke('capture_screen', {stamp: 'x'}));
out.capture_windows = await code(I.invoke('capture_windows'));
out.capture_window = await code(I.invoke('capture_window', {id: 1, stamp: 'x'}));
out.capture_region_begin = await code(I.invoke('capture_region_begin', {stamp: 'x'}));
out.capture_named_window = await code(I.invoke('capture_named_window', {picked: 1}));
return out;
})();
"#;

#[test]
fn e2e_grants_a_page_naming_a_path_is_refused_and_attaching_still_sends() {
    if !enabled() {
        return;
    }
    let agent = Agent::start(None);
    let (data, _) = data_with_profile("Grants agent", &agent.url(), TOKEN);
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
    let key = home.path().join(".ssh/id_ed25519");
    std::fs::write(&key, KEY).unwrap();
    let files = tempfile::tempdir().unwrap();
    let report = files.path().join("quarterly-report.txt");
    let report_bytes = b"the numbers the user chose to send\n".repeat(40);
    std::fs::write(&report, &report_bytes).unwrap();
    let driver = Driver::start_env(
        data.path(),
        &[("HOME", home.path().to_str().unwrap()), ("HERMES_E2E_PICK_FILES", report.to_str().unwrap())],
    );
    let s = driver.session(env!("CARGO_BIN_EXE_hermes-desktop"), &[]);
    s.wait("connected", 30, "return !!document.getElementById('composer-input') && !document.querySelector('.banner')");
    let bat = data.path().join("tmp").join("run.bat");
    std::fs::write(&bat, "@echo off\r\ncalc.exe\r\n").unwrap();

    let pid = s.exec("return window.__TAURI_INTERNALS__.invoke('list_profiles').then((p) => p[0].id)", json!([]));
    let got = s.exec(PROBE, json!([pid, key.to_str().unwrap(), bat.to_str().unwrap()]));
    eprintln!("the page's calls: {got}");
    for call in [
        "send_file",
        "send_file_tilde",
        "send_audio",
        "file_info",
        "file_url",
        "downscale_image",
        "save_file_as",
        "open_bat",
        "reveal_bat",
        "file_type_bat",
        "made_up",
        "open_pasted",
        "reveal_pasted",
    ] {
        assert_eq!(got[call], json!("file_not_granted"), "{call}: {got}");
    }
    assert_eq!(got["pasted_is_token"], json!(true), "{got}");
    for call in ["capture_screen", "capture_windows", "capture_window", "capture_region_begin", "capture_named_window"]
    {
        assert_eq!(got[call], json!("capture_denied"), "{call}: {got}");
    }

    // what the user attaches still goes: the file dialog's answer becomes a token, and the file arrives whole
    s.exec("document.querySelector('.composer .attach').click()", json!([]));
    s.wait("file staged", 15, "return document.querySelector('.composer').innerText.includes('quarterly-report.txt')");
    let staged: Value = s.exec("return document.querySelector('.composer').innerText", json!([]));
    assert!(!staged.as_str().unwrap_or_default().contains(files.path().to_str().unwrap()), "no path on the page");
    s.exec("document.querySelector('.composer button.send').click()", json!([]));
    body_has(&s, &format!("Got quarterly-report.txt ({} bytes)", report_bytes.len()), 60);
    s.screenshot(&wd::screens().join("grants-refused.png"));
    let received = files_under(&[agent.s().media_dir().to_path_buf()]);
    assert!(received.iter().any(|(_, b)| *b == report_bytes), "the attached file arrived byte for byte");
    assert!(
        !received.iter().any(|(_, b)| String::from_utf8_lossy(b).contains("grants-e2e-secret-key-material")),
        "the private key never reached the agent"
    );
    drop(s);
    drop(driver);
    assert_token_nowhere(data.path(), TOKEN);
}
