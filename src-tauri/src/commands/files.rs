//! Files: the native dialogs, files the page may open or show, pasted files. The page names every file by a token
//! the shell handed out (`crate::grants`), never by a path.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use hermes_app::safe_name;
use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt;
use tauri_plugin_opener::OpenerExt;

use super::blocking;
use crate::error::{AppError, AppResult, ErrorCode};
use crate::grants::{self, Grants, Purpose};
use crate::ipc::{ClipboardOffer, FileInfo, FileType};
use crate::state::AppState;

/// Ask where to save; `None` if the user cancelled.
/// WebDriver cannot drive the native GTK file dialogs: under automation only (`TAURI_WEBVIEW_AUTOMATION`, set by
/// WebKitWebDriver), `HERMES_E2E_SAVE_DIR` answers "save as" with `<dir>/<suggested name>` and `HERMES_E2E_PICK_FILES`
/// (paths separated by newlines) answers the file picker. Everything after the dialog runs as for a user.
/// Compiled into debug builds only (the e2e suite drives the debug build): a release build has no dialog overrides.
#[cfg(debug_assertions)]
fn e2e_dialog_override(var: &str) -> Option<String> {
    std::env::var_os("TAURI_WEBVIEW_AUTOMATION")?;
    std::env::var(var).ok().filter(|v| !v.is_empty())
}

#[cfg(not(debug_assertions))]
fn e2e_dialog_override(_var: &str) -> Option<String> {
    None
}

pub(super) async fn ask_save_path(app: &AppHandle, suggested: &str) -> AppResult<Option<PathBuf>> {
    if let Some(dir) = e2e_dialog_override("HERMES_E2E_SAVE_DIR") {
        return Ok(Some(PathBuf::from(dir).join(suggested)));
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog().file().set_file_name(suggested).save_file(move |p| {
        let _ = tx.send(p.and_then(|p| p.into_path().ok()));
    });
    rx.await.map_err(|_| AppError::internal("the save dialog closed unexpectedly"))
}

/// A stored file (received, or the copy of one sent) the OS may act on: see [`crate::grants`].
fn stored(state: &AppState, grants: &Grants, token: &str) -> AppResult<PathBuf> {
    Ok(grants.stored(token, &state.data_dir, &state.tmp_dir)?.path)
}

/// A stored file the OS may open with its default handler: of a viewable type by its own bytes and extension
/// (`hermes_client::filetype`), whatever the agent labelled it. Anything else is only saved or shown.
fn openable(state: &AppState, grants: &Grants, token: &str) -> AppResult<PathBuf> {
    let p = stored(state, grants, token)?;
    let t = hermes_client::filetype::of_file(&p)?;
    if t.viewable {
        Ok(p)
    } else {
        let ext = if t.name_ext.is_empty() { String::new() } else { format!(" (.{})", t.name_ext) };
        Err(AppError::new(
            ErrorCode::NotViewable,
            format!("this file is {}{ext}: it is not opened from the app", t.real_mime),
        ))
    }
}

/// What a stored file really is (from its bytes and extension): the page offers "Open" only when `viewable`, and
/// names the real type otherwise.
#[tauri::command(async)]
#[specta::specta]
pub fn file_type(state: State<'_, AppState>, token: String) -> AppResult<FileType> {
    let t = hermes_client::filetype::of_file(&stored(&state, grants::global(), &token)?)?;
    Ok(FileType { viewable: t.viewable, real_mime: t.real_mime, real_ext: t.real_ext, name_ext: t.name_ext })
}

#[tauri::command]
#[specta::specta]
pub fn reveal_file(app: AppHandle, state: State<'_, AppState>, token: String) -> AppResult<()> {
    let p = stored(&state, grants::global(), &token)?;
    app.opener().reveal_item_in_dir(p).map_err(|e| AppError::new(ErrorCode::OpenFailed, e.to_string()))
}

#[tauri::command]
#[specta::specta]
pub fn open_file(app: AppHandle, state: State<'_, AppState>, token: String) -> AppResult<()> {
    let p = openable(&state, grants::global(), &token)?;
    app.opener()
        .open_path(p.display().to_string(), None::<&str>)
        .map_err(|e| AppError::new(ErrorCode::OpenFailed, e.to_string()))
}

#[tauri::command]
#[specta::specta]
pub async fn save_file_as(app: AppHandle, state: State<'_, AppState>, token: String) -> AppResult<()> {
    let src = stored(&state, grants::global(), &token)?;
    let name = safe_name(&src.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default());
    if let Some(dest) = ask_save_path(&app, &name).await? {
        hermes_client::files::save_copy(&src, &dest)?;
    }
    Ok(())
}

/// The files the user chose, as tokens.
#[tauri::command]
#[specta::specta]
pub async fn pick_files(app: AppHandle) -> AppResult<Vec<String>> {
    let paths: Vec<PathBuf> = if let Some(list) = e2e_dialog_override("HERMES_E2E_PICK_FILES") {
        list.lines().map(PathBuf::from).collect()
    } else {
        let (tx, rx) = tokio::sync::oneshot::channel();
        app.dialog().file().pick_files(move |paths| {
            let _ = tx.send(paths.unwrap_or_default());
        });
        let paths = rx.await.map_err(|_| AppError::internal("the file dialog closed unexpectedly"))?;
        paths.into_iter().filter_map(|p| p.into_path().ok()).collect()
    };
    paths.iter().map(|p| grants::global().grant(p, Purpose::Picked)).collect()
}

/// One picture the user chooses (an avatar's): `None` when cancelled. Answered by `HERMES_E2E_PICK_FILES`'s first
/// line under automation, as [`pick_files`].
pub(crate) async fn pick_image(app: &AppHandle) -> AppResult<Option<PathBuf>> {
    if let Some(list) = e2e_dialog_override("HERMES_E2E_PICK_FILES") {
        return Ok(list.lines().next().map(PathBuf::from));
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog().file().add_filter("Pictures", &["png", "jpg", "jpeg", "webp", "gif"]).pick_file(move |p| {
        let _ = tx.send(p.and_then(|p| p.into_path().ok()));
    });
    rx.await.map_err(|_| AppError::internal("the file dialog closed unexpectedly"))
}

/// The URL of a granted file for `<img>`/`<audio>`: received files and the shell's own (pasted, recorded) only (the
/// asset protocol is scoped to those folders).
#[tauri::command(async)]
#[specta::specta]
pub fn file_url(state: State<'_, AppState>, token: String) -> AppResult<String> {
    file_url_of(&state, grants::global(), &token)
}

fn file_url_of(state: &AppState, grants: &Grants, token: &str) -> AppResult<String> {
    let p = grants.resolve(token)?.path;
    let media = std::fs::canonicalize(&state.media_dir)?;
    let tmp = std::fs::canonicalize(&state.tmp_dir).unwrap_or_else(|_| state.tmp_dir.clone());
    if !(p.starts_with(&media) || p.starts_with(&tmp)) {
        return Err(AppError::new(ErrorCode::ForbiddenPath, "only received files can be shown"));
    }
    Ok(asset_url(&p))
}

pub fn asset_url(p: &Path) -> String {
    let enc: String = url::form_urlencoded::byte_serialize(p.to_string_lossy().as_bytes()).collect();
    let enc = enc.replace('+', "%20");
    if cfg!(any(windows, target_os = "android")) {
        format!("http://asset.localhost/{enc}")
    } else {
        format!("asset://localhost/{enc}")
    }
}

/// The picture's token if it fits `max_bytes`, else the token of a smaller JPEG copy in the temp folder.
#[tauri::command]
#[specta::specta]
pub async fn downscale_image(state: State<'_, AppState>, token: String, max_bytes: u32) -> AppResult<String> {
    let tmp = state.tmp_dir.clone();
    blocking(move || downscale_of(grants::global(), &token, max_bytes, &tmp)).await?
}

fn downscale_of(grants: &Grants, token: &str, max_bytes: u32, tmp: &Path) -> AppResult<String> {
    let src = grants.resolve(token)?.path;
    let out = PathBuf::from(crate::media::downscale(&src, u64::from(max_bytes), tmp)?);
    if out == src { Ok(token.to_string()) } else { grants.grant(&out, Purpose::Downscaled) }
}

#[tauri::command(async)]
#[specta::specta]
pub fn file_info(token: String) -> AppResult<FileInfo> {
    file_info_of(grants::global(), token)
}

fn file_info_of(grants: &Grants, token: String) -> AppResult<FileInfo> {
    let g = grants.resolve(&token)?;
    let meta = std::fs::metadata(&g.path)?;
    // a folder dropped on the window: its own code, so that the page can say why it is refused (only files are sent)
    if meta.is_dir() {
        return Err(AppError::new(ErrorCode::IsFolder, "this is a folder; only files can be sent"));
    }
    if !meta.is_file() {
        return Err(AppError::invalid("this is not a file"));
    }
    Ok(FileInfo {
        name: g.name,
        size: meta.len(),
        mime: Some(hermes_client::files::mime_for_path(&g.path)),
        duration_ms: crate::media::duration_ms(&g.path),
        waveform: crate::media::waveform(&g.path),
        path: token,
    })
}

const MAX_TEMP_BYTES: usize = 64 * 1024 * 1024;

/// A pasted file, written into the temp folder: its token.
#[tauri::command(async)]
#[specta::specta]
pub fn write_temp_file(state: State<'_, AppState>, filename: String, base64: String) -> AppResult<String> {
    write_temp_of(grants::global(), &state.tmp_dir, &filename, &base64)
}

fn write_temp_of(grants: &Grants, tmp: &Path, filename: &str, base64: &str) -> AppResult<String> {
    if base64.len() > MAX_TEMP_BYTES * 4 / 3 + 4 {
        return Err(AppError::new(ErrorCode::TooLarge, "this file is too large"));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(base64.as_bytes())
        .map_err(|_| AppError::invalid("the file data is not valid base64"))?;
    let path = hermes_client::files::write_new(tmp, &safe_name(filename), &bytes)?;
    grants.grant(&path, Purpose::Pasted)
}

/// The image on the system clipboard, written as a PNG named `filename` in the temporary folder: its token, or
/// `None` when the clipboard holds no image. The page asks when its paste event carried no file (WebKitGTK's never
/// does for an image; see clipboard.rs).
#[tauri::command]
#[specta::specta]
pub async fn clipboard_image(
    app: AppHandle,
    state: State<'_, AppState>,
    filename: String,
) -> AppResult<Option<String>> {
    let Some(png) = crate::clipboard::image_png(&app).await? else { return Ok(None) };
    let tmp = state.tmp_dir.clone();
    blocking(move || -> AppResult<Option<String>> {
        let path = hermes_client::files::write_new(&tmp, &safe_name(&filename), &png)?;
        Ok(Some(grants::global().grant(&path, Purpose::Pasted)?))
    })
    .await?
}

/// Clipboard text longer than this goes as a text file, not quoted in the composer (a field of pages is no question).
pub const QUOTE_AT_MOST: usize = 4000;

/// Quick Ask's "Ask about the clipboard" (read on that click only): the clipboard's image as a PNG file, its text to
/// quote, or (longer than [`QUOTE_AT_MOST`] characters) its text as a `.txt` file; `stamp` names the files.
#[tauri::command]
#[specta::specta]
pub async fn clipboard_offer(app: AppHandle, state: State<'_, AppState>, stamp: String) -> AppResult<ClipboardOffer> {
    let content = crate::clipboard::content(&app).await?;
    let tmp = state.tmp_dir.clone();
    blocking(move || offer_of(grants::global(), &tmp, &stamp, content)).await?
}

fn offer_of(grants: &Grants, tmp: &Path, stamp: &str, content: crate::clipboard::Content) -> AppResult<ClipboardOffer> {
    use crate::clipboard::Content;
    let file = |ext: &str, bytes: &[u8]| -> AppResult<ClipboardOffer> {
        if bytes.len() > MAX_TEMP_BYTES {
            return Err(AppError::new(ErrorCode::TooLarge, "what the clipboard holds is too large to send"));
        }
        let path = hermes_client::files::write_new(tmp, &safe_name(&format!("clipboard-{stamp}.{ext}")), bytes)?;
        Ok(ClipboardOffer::File { path: grants.grant(&path, Purpose::Pasted)? })
    };
    match content {
        Content::Image(png) => file("png", &png),
        Content::Text(text) if text.chars().count() > QUOTE_AT_MOST => file("txt", text.as_bytes()),
        Content::Text(text) => Ok(ClipboardOffer::Text { text }),
        Content::Empty => Ok(ClipboardOffer::Empty),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipc::EngineCommand;

    fn app_state(data: &Path) -> AppState {
        let st = AppState::new(
            hermes_store::Store::open_in_memory().unwrap(),
            data.into(),
            data.join("logs"),
            crate::state::Keychain::known(crate::ipc::KeychainInfo { available: false, detail: None }),
        );
        std::fs::create_dir_all(&st.media_dir).unwrap();
        std::fs::create_dir_all(&st.tmp_dir).unwrap();
        st
    }

    #[test]
    fn the_clipboard_offers_an_image_as_a_png_file_long_text_as_a_txt_file_and_short_text_to_quote() {
        use crate::clipboard::Content;
        let tmp = tempfile::tempdir().unwrap();
        let g = Grants::new(16);
        let stamp = "2026-12-03T01-00-00-000Z";
        let png = vec![0x89, b'P', b'N', b'G', 1, 2, 3];
        let ClipboardOffer::File { path } = offer_of(&g, tmp.path(), stamp, Content::Image(png.clone())).unwrap()
        else {
            panic!("an image is a file")
        };
        let f = g.resolve(&path).unwrap();
        assert_eq!(f.name, format!("clipboard-{stamp}.png"));
        assert_eq!(std::fs::read(&f.path).unwrap(), png);
        assert!(f.path.starts_with(tmp.path()), "in the temporary folder: {:?}", f.path);

        let short = "a line\nand > another".to_string();
        assert_eq!(
            offer_of(&g, tmp.path(), stamp, Content::Text(short.clone())).unwrap(),
            ClipboardOffer::Text { text: short }
        );
        // counted in characters, not bytes: 4000 Cyrillic letters are still quoted
        let at_most = "я".repeat(QUOTE_AT_MOST);
        assert!(matches!(
            offer_of(&g, tmp.path(), stamp, Content::Text(at_most)).unwrap(),
            ClipboardOffer::Text { .. }
        ));
        let long = "я".repeat(QUOTE_AT_MOST + 1);
        let ClipboardOffer::File { path } = offer_of(&g, tmp.path(), stamp, Content::Text(long.clone())).unwrap()
        else {
            panic!("long text is a file")
        };
        let f = g.resolve(&path).unwrap();
        assert_eq!(f.name, format!("clipboard-{stamp}.txt"));
        assert_eq!(std::fs::read_to_string(&f.path).unwrap(), long);
        assert_eq!(offer_of(&g, tmp.path(), stamp, Content::Empty).unwrap(), ClipboardOffer::Empty);
        // the page's stamp is only part of a name: no way out of the folder
        let ClipboardOffer::File { path } = offer_of(&g, tmp.path(), "../../x", Content::Image(vec![1])).unwrap()
        else {
            panic!()
        };
        assert!(g.resolve(&path).unwrap().path.starts_with(tmp.path()));
    }

    #[test]
    fn file_info_refuses_a_folder_by_its_own_code() {
        let dir = tempfile::tempdir().unwrap();
        let g = Grants::new(16);
        let folder = g.grant(dir.path(), Purpose::Dropped).unwrap();
        let e = file_info_of(&g, folder).unwrap_err();
        assert_eq!(e.code, ErrorCode::IsFolder, "{e}");
        let f = dir.path().join("note.txt");
        std::fs::write(&f, b"hello").unwrap();
        let token = g.grant(&f, Purpose::Dropped).unwrap();
        let info = file_info_of(&g, token.clone()).unwrap();
        assert_eq!((info.name.as_str(), info.size, info.path), ("note.txt", 5, token.clone()));
        std::fs::remove_file(&f).unwrap();
        let gone = file_info_of(&g, token).unwrap_err();
        assert_eq!(gone.code, ErrorCode::NotFound, "{gone}");
    }

    #[test]
    fn a20_open_refuses_a_program_labelled_as_a_pdf_and_anything_outside_the_folder() {
        let data = tempfile::tempdir().unwrap();
        let st = app_state(data.path());
        let g = Grants::new(16);
        let pdf = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n";
        let bad = st.media_dir.join("report.pdf.exe");
        std::fs::write(&bad, pdf).unwrap();
        let e = openable(&st, &g, &g.grant(&bad, Purpose::Stored).unwrap()).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotViewable, "{e}");
        assert!(e.to_string().contains("application/pdf (.exe)"), "{e}");
        let good = st.media_dir.join("report.pdf");
        std::fs::write(&good, pdf).unwrap();
        assert_eq!(openable(&st, &g, &g.grant(&good, Purpose::Stored).unwrap()).unwrap(), good.canonicalize().unwrap());
        let elsewhere = tempfile::tempdir().unwrap();
        let outside = elsewhere.path().join("report.pdf");
        std::fs::write(&outside, pdf).unwrap();
        let e = openable(&st, &g, &g.grant(&outside, Purpose::Stored).unwrap()).unwrap_err();
        assert_eq!(e.code, ErrorCode::ForbiddenPath, "{e}");
    }

    /// A page running someone else's script names a private key and a program it wrote into the temp folder: every
    /// command that takes a file refuses both, with `file_not_granted`; a token of the pasted program opens nothing.
    #[test]
    fn a_private_key_and_a_program_in_the_temp_folder_are_refused_by_every_file_command() {
        let data = tempfile::tempdir().unwrap();
        let st = app_state(data.path());
        let g = Grants::new(16);
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
        let key = home.path().join(".ssh/id_ed25519");
        std::fs::write(&key, "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n").unwrap();
        let bat = st.tmp_dir.join("run.bat");
        std::fs::write(&bat, "@echo off\r\ncalc.exe\r\n").unwrap();
        let png = st.tmp_dir.join("shot.png");
        image::RgbImage::new(4, 4).save(&png).unwrap();
        let not_granted = |r: AppResult<String>, what: &str| {
            assert_eq!(r.map_err(|e| e.code).unwrap_err(), ErrorCode::FileNotGranted, "{what}");
        };
        for p in [&key, &bat, &png] {
            let raw = p.display().to_string();
            not_granted(file_info_of(&g, raw.clone()).map(|i| i.path), "file_info");
            not_granted(file_url_of(&st, &g, &raw), "file_url");
            not_granted(downscale_of(&g, &raw, 10, &st.tmp_dir), "downscale_image");
            not_granted(stored(&st, &g, &raw).map(|p| p.display().to_string()), "file_type / reveal / save_file_as");
            not_granted(openable(&st, &g, &raw).map(|p| p.display().to_string()), "open_file");
            for command in [
                EngineCommand::File { path: raw.clone(), caption: None, id: None, session: None, retry_of: None },
                EngineCommand::Audio { path: raw.clone(), text: None, id: None, session: None, retry_of: None },
            ] {
                not_granted(grants::resolve_command(&g, command).map(|c| format!("{c:?}")), "send_command");
            }
        }
        not_granted(file_info_of(&g, "~/.ssh/id_ed25519".into()).map(|i| i.path), "file_info with ~");
        // written by the page itself: a token it may send or describe, never one the OS opens, saves or shows
        let pasted = write_temp_of(&g, &st.tmp_dir, "run.bat", "QGVjaG8gb2ZmDQpjYWxjLmV4ZQ0K").unwrap();
        assert_eq!(file_info_of(&g, pasted.clone()).unwrap().name, "run (1).bat", "never over the one already there");
        not_granted(openable(&st, &g, &pasted).map(|p| p.display().to_string()), "open a pasted program");
        not_granted(stored(&st, &g, &pasted).map(|p| p.display().to_string()), "save or show a pasted program");
        // even granted as a stored file, nothing is opened from the temp folder
        let in_tmp = g.grant(&bat, Purpose::Stored).unwrap();
        assert_eq!(openable(&st, &g, &in_tmp).unwrap_err().code, ErrorCode::ForbiddenPath);
    }

    #[test]
    fn a_picture_that_fits_keeps_its_token_and_a_smaller_copy_gets_its_own() {
        let data = tempfile::tempdir().unwrap();
        let st = app_state(data.path());
        let g = Grants::new(16);
        let png = data.path().join("big.png");
        let mut img = image::RgbImage::new(300, 300);
        for (i, p) in img.pixels_mut().enumerate() {
            *p = image::Rgb([(i * 7) as u8, (i * 13) as u8, (i * 31) as u8]);
        }
        img.save(&png).unwrap();
        let t = g.grant(&png, Purpose::Picked).unwrap();
        assert_eq!(downscale_of(&g, &t, u32::MAX, &st.tmp_dir).unwrap(), t);
        let small = downscale_of(&g, &t, 20_000, &st.tmp_dir).unwrap();
        assert_ne!(small, t);
        let got = g.resolve(&small).unwrap();
        assert_eq!(got.purpose, Purpose::Downscaled);
        assert!(got.path.starts_with(st.tmp_dir.canonicalize().unwrap()));
        assert!(file_url_of(&st, &g, &small).unwrap().starts_with("asset://"));
    }

    #[test]
    fn asset_urls_are_encoded() {
        let u = asset_url(Path::new("/data/media/a b#.png"));
        assert!(u.ends_with("%2Fdata%2Fmedia%2Fa%20b%23.png"), "{u}");
    }
}
