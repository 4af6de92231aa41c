//! Files: the native dialogs, files the page may open or show (inside the app's folders only), pasted and dropped
//! files.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use hermes_app::safe_name;
use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt;
use tauri_plugin_opener::OpenerExt;

use super::blocking;
use crate::error::{AppError, AppResult, ErrorCode};
use crate::ipc::{FileInfo, FileType};
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

/// Files the UI may act on: only inside the app's data folder (received media, pasted files, outbox copies).
fn app_file(state: &AppState, path: &str) -> AppResult<PathBuf> {
    inside(&state.data_dir, path)
}

fn inside(root: &Path, path: &str) -> AppResult<PathBuf> {
    let p = std::fs::canonicalize(path).map_err(|_| AppError::not_found("the file"))?;
    let root = std::fs::canonicalize(root)?;
    if p.starts_with(&root) {
        Ok(p)
    } else {
        Err(AppError::new(ErrorCode::ForbiddenPath, "this file is outside the app's folder"))
    }
}

/// A file the OS may open with its default handler: inside `root`, and of a viewable type by its own bytes and
/// extension (`hermes_client::filetype`), whatever the agent labelled it. Anything else is only saved or shown.
fn openable(root: &Path, path: &str) -> AppResult<PathBuf> {
    let p = inside(root, path)?;
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

/// What a file in the app's folder really is (from its bytes and extension): the page offers "Open" only when
/// `viewable`, and names the real type otherwise.
#[tauri::command(async)]
#[specta::specta]
pub fn file_type(state: State<'_, AppState>, path: String) -> AppResult<FileType> {
    let t = hermes_client::filetype::of_file(&app_file(&state, &path)?)?;
    Ok(FileType { viewable: t.viewable, real_mime: t.real_mime, real_ext: t.real_ext, name_ext: t.name_ext })
}

#[tauri::command]
#[specta::specta]
pub fn reveal_file(app: AppHandle, state: State<'_, AppState>, path: String) -> AppResult<()> {
    let p = app_file(&state, &path)?;
    app.opener().reveal_item_in_dir(p).map_err(|e| AppError::new(ErrorCode::OpenFailed, e.to_string()))
}

#[tauri::command]
#[specta::specta]
pub fn open_file(app: AppHandle, state: State<'_, AppState>, path: String) -> AppResult<()> {
    let p = openable(&state.data_dir, &path)?;
    app.opener()
        .open_path(p.display().to_string(), None::<&str>)
        .map_err(|e| AppError::new(ErrorCode::OpenFailed, e.to_string()))
}

#[tauri::command]
#[specta::specta]
pub async fn save_file_as(app: AppHandle, state: State<'_, AppState>, path: String) -> AppResult<()> {
    let src = app_file(&state, &path)?;
    let name = safe_name(&src.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default());
    if let Some(dest) = ask_save_path(&app, &name).await? {
        hermes_client::files::save_copy(&src, &dest)?;
    }
    Ok(())
}

#[tauri::command]
#[specta::specta]
pub async fn pick_files(app: AppHandle) -> AppResult<Vec<String>> {
    if let Some(list) = e2e_dialog_override("HERMES_E2E_PICK_FILES") {
        return Ok(list.lines().map(str::to_string).collect());
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog().file().pick_files(move |paths| {
        let _ = tx.send(paths.unwrap_or_default());
    });
    let paths = rx.await.map_err(|_| AppError::internal("the file dialog closed unexpectedly"))?;
    Ok(paths.into_iter().filter_map(|p| p.into_path().ok()).map(|p| p.display().to_string()).collect())
}

/// The URL of a received file for `<img>`/`<audio>` (the asset protocol is scoped to the media folder only).
#[tauri::command(async)]
#[specta::specta]
pub fn file_url(state: State<'_, AppState>, path: String) -> AppResult<String> {
    let p = std::fs::canonicalize(&path).map_err(|_| AppError::not_found("the file"))?;
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

#[tauri::command]
#[specta::specta]
pub async fn downscale_image(state: State<'_, AppState>, path: String, max_bytes: u32) -> AppResult<String> {
    let tmp = state.tmp_dir.clone();
    blocking(move || crate::media::downscale(Path::new(&path), u64::from(max_bytes), &tmp)).await?
}

#[tauri::command(async)]
#[specta::specta]
pub fn file_info(path: String) -> AppResult<FileInfo> {
    let p = PathBuf::from(&path);
    let meta = std::fs::metadata(&p)?;
    // a folder dropped on the window: its own code, so that the page can say why it is refused (only files are sent)
    if meta.is_dir() {
        return Err(AppError::new(ErrorCode::IsFolder, "this is a folder; only files can be sent"));
    }
    if !meta.is_file() {
        return Err(AppError::invalid("this is not a file"));
    }
    Ok(FileInfo {
        name: p.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default(),
        size: meta.len(),
        mime: Some(hermes_client::files::mime_for_path(&p)),
        duration_ms: crate::media::duration_ms(&p),
        path,
    })
}

const MAX_TEMP_BYTES: usize = 64 * 1024 * 1024;

#[tauri::command(async)]
#[specta::specta]
pub fn write_temp_file(state: State<'_, AppState>, filename: String, base64: String) -> AppResult<String> {
    if base64.len() > MAX_TEMP_BYTES * 4 / 3 + 4 {
        return Err(AppError::new(ErrorCode::TooLarge, "this file is too large"));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(base64.as_bytes())
        .map_err(|_| AppError::invalid("the file data is not valid base64"))?;
    let path = hermes_client::files::write_new(&state.tmp_dir, &safe_name(&filename), &bytes)?;
    Ok(path.display().to_string())
}

/// The image on the system clipboard, written as a PNG named `filename` in the temporary folder: its path, or `None`
/// when the clipboard holds no image. The page asks when its paste event carried no file (WebKitGTK's never does
/// for an image; see clipboard.rs).
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
        Ok(Some(path.display().to_string()))
    })
    .await?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_info_refuses_a_folder_by_its_own_code() {
        let dir = tempfile::tempdir().unwrap();
        let e = file_info(dir.path().display().to_string()).unwrap_err();
        assert_eq!(e.code, ErrorCode::IsFolder, "{e}");
        let f = dir.path().join("note.txt");
        std::fs::write(&f, b"hello").unwrap();
        let info = file_info(f.display().to_string()).unwrap();
        assert_eq!((info.name.as_str(), info.size), ("note.txt", 5));
        let gone = file_info(dir.path().join("gone.txt").display().to_string()).unwrap_err();
        assert_eq!(gone.code, ErrorCode::NotFound, "{gone}");
    }

    #[test]
    fn a20_open_refuses_a_program_labelled_as_a_pdf_and_anything_outside_the_folder() {
        let root = tempfile::tempdir().unwrap();
        let pdf = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n";
        let bad = root.path().join("report.pdf.exe");
        std::fs::write(&bad, pdf).unwrap();
        let e = openable(root.path(), &bad.display().to_string()).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotViewable, "{e}");
        assert!(e.to_string().contains("application/pdf (.exe)"), "{e}");
        let good = root.path().join("report.pdf");
        std::fs::write(&good, pdf).unwrap();
        assert_eq!(openable(root.path(), &good.display().to_string()).unwrap(), good.canonicalize().unwrap());
        let elsewhere = tempfile::tempdir().unwrap();
        let outside = elsewhere.path().join("report.pdf");
        std::fs::write(&outside, pdf).unwrap();
        let e = openable(root.path(), &outside.display().to_string()).unwrap_err();
        assert_eq!(e.code, ErrorCode::ForbiddenPath, "{e}");
    }

    #[test]
    fn asset_urls_are_encoded() {
        let u = asset_url(Path::new("/data/media/a b#.png"));
        assert!(u.ends_with("%2Fdata%2Fmedia%2Fa%20b%23.png"), "{u}");
    }
}
