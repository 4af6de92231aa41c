//! Files the agent sends, through the real engine and the reference agent on loopback (A-20): what lands on disk
//! is what the app later judges by its bytes and extension, never by the agent's label.

mod common;

use common::*;
use hermes_client::filetype;
use hermes_devserver::Config as ServerConfig;
use hermes_protocol::{Dialect, Event};

/// `%PDF-1.7` and a catalog object: a PDF by its magic number.
const PDF_B64: &str = "JVBERi0xLjcKMSAwIG9iaiA8PCAvVHlwZSAvQ2F0YWxvZyA+PiBlbmRvYmoK";

fn media(id: &str, mime: &str, filename: &str) -> String {
    let filename = serde_json::to_string(filename).unwrap();
    format!(
        r#"{{"t":"media","id":"{id}","kind":"document","mime":"{mime}","filename":{filename},"part":0,"parts":1,"final":true,"data":"{PDF_B64}"}}"#
    )
}

async fn received(c: &mut Client, want: &str) -> (String, String) {
    match c.wait(10, |e| matches!(e, Event::Media { id, .. } if id == want)).await {
        Event::Media { path, filename, .. } => (path, filename),
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn a20_a_program_named_as_a_pdf_is_saved_but_not_viewable_and_names_lose_what_hides() {
    let srv = hermes_devserver::start(ServerConfig::fast()).await.expect("devserver");
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&srv.adapter_url(), Dialect::Adapter, srv.token(), "desktop-files", dir.path()));
    c.ready().await;

    // a PDF's bytes, labelled application/pdf, under an executable's extension
    srv.send_raw_to_device("desktop-files", &media("exe", "application/pdf", "report.pdf.exe"));
    let (path, filename) = received(&mut c, "exe").await;
    assert_eq!(filename, "report.pdf.exe");
    let t = filetype::of_file(std::path::Path::new(&path)).unwrap();
    assert!(!t.viewable, "{t:?}");
    assert_eq!((t.real_mime.as_str(), t.name_ext.as_str()), ("application/pdf", "exe"));

    // an override that would make it read as "…exe.pdf" and a zero-width space: nothing invisible is left in the
    // name on disk (the protocol's first pass shows the override as `_`, the zero-width space is removed)
    srv.send_raw_to_device("desktop-files", &media("rtl", "application/pdf", "Q3\u{200B}report\u{202E}fdp.exe"));
    let (path, filename) = received(&mut c, "rtl").await;
    assert_eq!(filename, "Q3report_fdp.exe");
    assert!(path.ends_with("Q3report_fdp.exe"), "{path}");

    // the same name twice: two files, the first one untouched
    srv.send_raw_to_device("desktop-files", &media("pdf1", "application/pdf", "report.pdf"));
    srv.send_raw_to_device("desktop-files", &media("pdf2", "application/pdf", "report.pdf"));
    let (first, _) = received(&mut c, "pdf1").await;
    let (second, name2) = received(&mut c, "pdf2").await;
    assert_ne!(first, second);
    assert_eq!(name2, "report (1).pdf");
    assert!(filetype::of_file(std::path::Path::new(&first)).unwrap().viewable, "a real PDF named .pdf opens");

    #[cfg(unix)]
    for p in [&path, &first, &second] {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(p).unwrap().permissions().mode() & 0o111, 0, "{p} is not executable");
    }
}
