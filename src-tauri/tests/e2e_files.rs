//! A file the agent sends never runs with one click, through the real app (WebKitWebDriver, Xvfb; see e2e.rs), its
//! engine and its shell: a PDF's bytes named `Q3-report-final-for-review.pdf.exe` and labelled `application/pdf`
//! get no "Open", a warning naming the real type and the double extension, and a copy saved without the execute
//! bit; a real text file next to it gets "Open". Skipped unless `HERMES_E2E=1` (`cargo xtask e2e e2e_files`).
//! Screenshot: `target/e2e-screens/files-disguised.png`.

mod wd;

use std::time::{Duration, Instant};

use serde_json::json;
use wd::Driver;
use wd::app::*;

/// `%PDF-1.7` and a catalog object: a PDF by its magic number.
const PDF_B64: &str = "JVBERi0xLjcKMSAwIG9iaiA8PCAvVHlwZSAvQ2F0YWxvZyA+PiBlbmRvYmoK";

#[test]
fn e2e_files_a_program_dressed_as_a_pdf_offers_no_open() {
    if !enabled() {
        return;
    }
    let agent = Agent::start(None);
    let (data, device) = data_with_profile("Files agent", &agent.url(), TOKEN);
    let save_dir = tempfile::tempdir().unwrap();
    let driver = Driver::start_env(data.path(), &[("HERMES_E2E_SAVE_DIR", save_dir.path().to_str().unwrap())]);
    let s = driver.session(env!("CARGO_BIN_EXE_hermes-desktop"), &[]);
    s.wait("connected", 30, "return !!document.getElementById('composer-input') && !document.querySelector('.banner')");

    let exe = "Q3-report-final-for-review.pdf.exe";
    agent.s().send_raw_to_device(
        &device,
        &format!(
            r#"{{"t":"media","id":"disguised","kind":"document","mime":"application/pdf","filename":"{exe}","part":0,"parts":1,"final":true,"data":"{PDF_B64}"}}"#
        ),
    );
    agent.s().send_raw_to_device(
        &device,
        r#"{"t":"media","id":"notes","kind":"document","mime":"text/plain","filename":"notes.txt","part":0,"parts":1,"final":true,"data":"aGVsbG8sIHdvcmxkCg=="}"#,
    );
    let card = "const card = (name) => [...document.querySelectorAll('.attachment')].find((a) => a.querySelector('.file-name')?.title === name);";
    s.wait(
        "the warning on the disguised file",
        30,
        &format!("{card} const c = card('{exe}'); return !!c && c.innerText.includes('application/pdf') && c.innerText.includes('.exe')"),
    );
    s.wait(
        "Open on the text file",
        15,
        &format!("{card} return !!card('notes.txt')?.querySelector('button[aria-label=\"Open\"]')"),
    );
    let disguised = s.exec(
        &format!(
            "{card} const c = card('{exe}'); return {{open: !!c.querySelector('button[aria-label=\"Open\"]'), text: c.innerText}}"
        ),
        json!([]),
    );
    assert_eq!(disguised["open"], json!(false), "no Open on a program: {disguised}");
    let text = disguised["text"].as_str().unwrap_or_default();
    assert!(text.contains("only looks like a .pdf file"), "the double extension is flagged: {text}");
    s.screenshot(&wd::screens().join("files-disguised.png"));

    s.exec(&format!("{card} card('{exe}').querySelector('button[aria-label=\"Save as…\"]').click()"), json!([]));
    let saved = save_dir.path().join(exe);
    let t = Instant::now();
    while !saved.exists() {
        assert!(t.elapsed() < Duration::from_secs(10), "save as wrote nothing");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(200));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&saved).unwrap().permissions().mode();
        assert_eq!(mode & 0o111, 0, "the saved copy is not executable ({mode:o})");
    }
    drop(s);
    drop(driver);
    assert_token_nowhere(data.path(), TOKEN);
}
