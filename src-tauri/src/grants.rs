//! Files the page may name: opaque tokens the shell handed out, never paths.
//!
//! A page that runs someone else's script (a hole in the markdown path, a compromised dependency) must not be able to
//! send `~/.ssh/id_ed25519` to the agent, read it, or open a program it wrote into the temp folder. So no command
//! takes a path from the page. The shell hands out a token for every file the user gave it — picked in the file
//! dialog, dropped on the window (the shell's own drop handler, [`on_window_event`]), pasted, recorded — and for
//! every file of the store's history (received from the agent or a copy of one sent) when it serves a history page
//! or a `media` event. Commands take the token and act on the canonical path it stands for, as its purpose allows:
//! any granted file may be sent or described; only a stored file, inside the data folder and never in its temp
//! folder, may be opened, saved elsewhere or shown in its folder. A path, a made-up token or one from before a
//! restart is refused with `file_not_granted`.
//!
//! A token is `hfile:` and a random v4 UUID in hex (122 random bits), then `/` and the file's name (a label for the page, which knows
//! the name anyway; only the whole token is looked up). The registry lives in memory for the session and holds at
//! most [`CAPACITY`] grants; the same file for the same purpose keeps its token, and the least recently handed out
//! goes first when it is full (the page then shows that file as gone until its history is read again).

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

use tauri::Manager as _;
use tauri_specta::Event as _;

use crate::error::{AppError, AppResult, ErrorCode};
use crate::ipc::{EngineCommand, EngineEvent, HistoryPage};

/// How many grants the registry keeps.
pub const CAPACITY: usize = 4096;
const PREFIX: &str = "hfile:";

/// Where a granted file came from: what the page may do with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Purpose {
    /// Chosen in the file dialog.
    Picked,
    /// Dropped on the main window.
    Dropped,
    /// Pasted: written by the shell into its temp folder.
    Pasted,
    /// A voice recording the shell wrote.
    Recorded,
    /// A smaller copy of a picture the user gave, written by the shell.
    Downscaled,
    /// A screen capture, or a cut of a picture, written by the shell.
    Captured,
    /// A file of the store's history (received, or the copy of one sent).
    Stored,
}

/// A file the shell handed out.
#[derive(Debug, Clone, PartialEq)]
pub struct Grant {
    /// Canonical: links and `..` resolved when it was granted.
    pub path: PathBuf,
    pub purpose: Purpose,
    /// The name it was given under (a dropped link keeps its own name).
    pub name: String,
}

#[derive(Default)]
struct Inner {
    by_token: HashMap<String, Grant>,
    by_file: HashMap<(PathBuf, Purpose), String>,
    /// Oldest handed out first.
    order: VecDeque<String>,
}

/// The registry of tokens.
pub struct Grants {
    inner: Mutex<Inner>,
    capacity: usize,
}

static GRANTS: LazyLock<Grants> = LazyLock::new(|| Grants::new(CAPACITY));

/// The session's registry.
pub fn global() -> &'static Grants {
    &GRANTS
}

fn not_granted(what: &str) -> AppError {
    AppError::new(ErrorCode::FileNotGranted, what.to_string())
}

impl Grants {
    pub fn new(capacity: usize) -> Self {
        Grants { inner: Mutex::new(Inner::default()), capacity: capacity.max(1) }
    }

    /// The token of `path` for `purpose` (`not_found` when there is no such file).
    pub fn grant(&self, path: &Path, purpose: Purpose) -> AppResult<String> {
        let canon = std::fs::canonicalize(path).map_err(|_| AppError::not_found("the file"))?;
        let name = path.file_name().or(canon.file_name()).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let mut g = self.inner.lock()?;
        let key = (canon, purpose);
        if let Some(token) = g.by_file.get(&key).cloned() {
            if let Some(i) = g.order.iter().position(|t| *t == token) {
                g.order.remove(i);
            }
            g.order.push_back(token.clone());
            return Ok(token);
        }
        while g.order.len() >= self.capacity {
            let Some(old) = g.order.pop_front() else { break };
            if let Some(gone) = g.by_token.remove(&old) {
                g.by_file.remove(&(gone.path, gone.purpose));
            }
        }
        let token = format!("{PREFIX}{}/{name}", uuid::Uuid::new_v4().simple());
        g.by_token.insert(token.clone(), Grant { path: key.0.clone(), purpose, name });
        g.by_file.insert(key, token.clone());
        g.order.push_back(token.clone());
        Ok(token)
    }

    /// What `token` stands for; `file_not_granted` for a path or any string the shell did not hand out.
    pub fn resolve(&self, token: &str) -> AppResult<Grant> {
        if !token.starts_with(PREFIX) {
            return Err(not_granted("a path is not accepted: choose the file in the app (attach, drop or paste)"));
        }
        self.inner
            .lock()?
            .by_token
            .get(token)
            .cloned()
            .ok_or_else(|| not_granted("this file was not handed out by the app in this session"))
    }

    /// A stored file the OS may act on (open, save a copy, show in its folder): granted as [`Purpose::Stored`],
    /// inside `data_dir` and not in `tmp_dir`.
    pub fn stored(&self, token: &str, data_dir: &Path, tmp_dir: &Path) -> AppResult<Grant> {
        let g = self.resolve(token)?;
        if g.purpose != Purpose::Stored {
            return Err(not_granted("only received or sent files of the history are opened or saved from the app"));
        }
        let data = std::fs::canonicalize(data_dir)?;
        let tmp = std::fs::canonicalize(tmp_dir).unwrap_or_else(|_| tmp_dir.to_path_buf());
        if !g.path.starts_with(&data) || g.path.starts_with(&tmp) {
            return Err(AppError::new(ErrorCode::ForbiddenPath, "this file is outside the app's folder"));
        }
        Ok(g)
    }

    pub fn len(&self) -> usize {
        self.inner.lock().map(|g| g.by_token.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A token of a stored file, or `""` when the file is gone (the page shows it as unavailable).
fn stored_token(grants: &Grants, path: &str) -> String {
    grants.grant(Path::new(path), Purpose::Stored).unwrap_or_default()
}

/// An engine command from the page with its file token turned into the file's path (`file` and `audio`; the others
/// name no file). A raw path is refused.
pub fn resolve_command(grants: &Grants, command: EngineCommand) -> AppResult<EngineCommand> {
    let real = |token: String| grants.resolve(&token).map(|g| g.path.to_string_lossy().into_owned());
    Ok(match command {
        EngineCommand::File { path, caption, id, session, retry_of } => {
            EngineCommand::File { path: real(path)?, caption, id, session, retry_of }
        }
        EngineCommand::Audio { path, text, id, session, retry_of } => {
            EngineCommand::Audio { path: real(path)?, text, id, session, retry_of }
        }
        other => other,
    })
}

/// An engine event for the page: a received file's path becomes its token.
pub fn event_for_page(ev: EngineEvent) -> EngineEvent {
    match ev {
        EngineEvent::Media { id, kind, mime, filename, caption, path, size, session } => {
            let path = stored_token(global(), &path);
            EngineEvent::Media { id, kind, mime, filename, caption, path, size, session }
        }
        other => other,
    }
}

/// A history page for the page: every attachment's path becomes its token.
pub fn history_for_page(mut page: HistoryPage) -> HistoryPage {
    for m in &mut page.messages {
        for a in &mut m.attachments {
            a.path = stored_token(global(), &a.path);
        }
    }
    page
}

/// Files dropped on the main window, as tokens, in the order dropped (a folder too: the page says why it is not
/// sent).
#[derive(Debug, Clone, PartialEq, serde::Serialize, specta::Type, tauri_specta::Event)]
pub struct FilesDropped {
    pub files: Vec<String>,
}

/// The shell's drop handler (every window's events): files dropped on the main window are granted and handed to its
/// page as [`FilesDropped`]. The page's own drop event is only used for the overlay.
pub fn on_window_event<R: tauri::Runtime>(window: &tauri::Window<R>, event: &tauri::WindowEvent) {
    let tauri::WindowEvent::DragDrop(tauri::DragDropEvent::Drop { paths, .. }) = event else { return };
    // the app's own pages: the main window and the Quick Ask panel
    if window.label() != crate::window::MAIN && window.label() != crate::quick::QUICK {
        return;
    }
    let files: Vec<String> = paths
        .iter()
        .filter_map(|p| match global().grant(p, Purpose::Dropped) {
            Ok(t) => Some(t),
            Err(e) => {
                tracing::warn!("a dropped file cannot be read: {e}");
                None
            }
        })
        .collect();
    if files.is_empty() {
        return;
    }
    if let Err(e) = (FilesDropped { files }).emit_to(window.app_handle(), window.label()) {
        tracing::warn!("cannot hand the dropped files to the page: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dir: &Path, name: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, b"x").unwrap();
        p
    }

    #[test]
    fn a_token_stands_for_the_canonical_file_and_is_unguessable() {
        let dir = tempfile::tempdir().unwrap();
        let p = file(dir.path(), "note.txt");
        let g = Grants::new(16);
        let t = g.grant(&dir.path().join(".").join("note.txt"), Purpose::Picked).unwrap();
        let hex = t.strip_prefix(PREFIX).unwrap().strip_suffix("/note.txt").unwrap();
        assert!(hex.len() == 32 && hex.chars().all(|c| c.is_ascii_hexdigit()), "{t}");
        let got = g.resolve(&t).unwrap();
        assert_eq!(
            (got.path, got.purpose, got.name.as_str()),
            (p.canonicalize().unwrap(), Purpose::Picked, "note.txt")
        );
        // the same file for the same purpose keeps its token; another purpose gets its own
        assert_eq!(g.grant(&p, Purpose::Picked).unwrap(), t);
        let stored = g.grant(&p, Purpose::Stored).unwrap();
        assert_ne!(stored, t);
        // two registries never agree on a token: it comes from randomness, not from the path
        assert_ne!(Grants::new(16).grant(&p, Purpose::Picked).unwrap(), t);
        assert_eq!(g.grant(&dir.path().join("gone.txt"), Purpose::Picked).unwrap_err().code, ErrorCode::NotFound);
    }

    #[test]
    fn paths_and_made_up_tokens_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = file(dir.path(), "note.txt");
        let g = Grants::new(16);
        let t = g.grant(&p, Purpose::Dropped).unwrap();
        for bad in [
            p.display().to_string(),
            format!("{PREFIX}00000000000000000000000000000000/note.txt"),
            t.replace("/note.txt", "/other.txt"),
            format!("{t}/.."),
            String::new(),
        ] {
            assert_eq!(g.resolve(&bad).unwrap_err().code, ErrorCode::FileNotGranted, "{bad}");
        }
    }

    #[test]
    fn the_registry_is_bounded_and_drops_the_least_recently_handed_out() {
        let dir = tempfile::tempdir().unwrap();
        let g = Grants::new(3);
        let paths: Vec<PathBuf> = (0..5).map(|i| file(dir.path(), &format!("f{i}"))).collect();
        let t0 = g.grant(&paths[0], Purpose::Picked).unwrap();
        let t1 = g.grant(&paths[1], Purpose::Picked).unwrap();
        let _t2 = g.grant(&paths[2], Purpose::Picked).unwrap();
        // handed out again: now the most recent
        assert_eq!(g.grant(&paths[0], Purpose::Picked).unwrap(), t0);
        g.grant(&paths[3], Purpose::Picked).unwrap();
        assert_eq!(g.len(), 3);
        assert_eq!(g.resolve(&t1).unwrap_err().code, ErrorCode::FileNotGranted, "the oldest went");
        assert!(g.resolve(&t0).is_ok());
        for p in &paths {
            g.grant(p, Purpose::Stored).unwrap();
        }
        assert_eq!(g.len(), 3, "never more than its capacity");
        // a forgotten file granted again gets a new token
        assert_ne!(g.grant(&paths[1], Purpose::Picked).unwrap(), t1);
    }

    #[test]
    fn only_stored_files_inside_the_data_folder_and_out_of_its_temp_folder_may_be_opened() {
        let data = tempfile::tempdir().unwrap();
        let tmp = data.path().join("tmp");
        let media = data.path().join("media");
        std::fs::create_dir_all(&tmp).unwrap();
        std::fs::create_dir_all(&media).unwrap();
        let g = Grants::new(16);
        let received = g.grant(&file(&media, "a.pdf"), Purpose::Stored).unwrap();
        assert!(g.stored(&received, data.path(), &tmp).is_ok());
        let pasted = g.grant(&file(&tmp, "run.bat"), Purpose::Pasted).unwrap();
        assert_eq!(g.stored(&pasted, data.path(), &tmp).unwrap_err().code, ErrorCode::FileNotGranted);
        let in_tmp = g.grant(&tmp.join("run.bat"), Purpose::Stored).unwrap();
        assert_eq!(g.stored(&in_tmp, data.path(), &tmp).unwrap_err().code, ErrorCode::ForbiddenPath);
        let elsewhere = tempfile::tempdir().unwrap();
        let outside = g.grant(&file(elsewhere.path(), "b.pdf"), Purpose::Stored).unwrap();
        assert_eq!(g.stored(&outside, data.path(), &tmp).unwrap_err().code, ErrorCode::ForbiddenPath);
    }

    #[test]
    fn engine_commands_from_the_page_name_files_by_token_only() {
        let dir = tempfile::tempdir().unwrap();
        let p = file(dir.path(), "clip.wav");
        let g = Grants::new(16);
        let t = g.grant(&p, Purpose::Recorded).unwrap();
        let audio = |path: String| EngineCommand::Audio { path, text: None, id: None, session: None, retry_of: None };
        let EngineCommand::Audio { path, .. } = resolve_command(&g, audio(t)).unwrap() else { panic!() };
        assert_eq!(PathBuf::from(path), p.canonicalize().unwrap());
        let raw = p.display().to_string();
        assert_eq!(resolve_command(&g, audio(raw.clone())).unwrap_err().code, ErrorCode::FileNotGranted);
        let file = EngineCommand::File { path: raw, caption: None, id: None, session: None, retry_of: None };
        assert_eq!(resolve_command(&g, file).unwrap_err().code, ErrorCode::FileNotGranted);
        assert_eq!(resolve_command(&g, EngineCommand::Reconnect).unwrap(), EngineCommand::Reconnect);
    }
}
