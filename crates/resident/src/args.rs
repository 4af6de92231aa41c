//! The command line: `hermes-resident --data-dir D --log-dir L --app <window process executable>`.

use std::ffi::OsString;
use std::path::PathBuf;

pub const USAGE: &str = "usage: hermes-resident --data-dir <dir> --log-dir <dir> --app <path>";

/// What the window process tells the resident.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    /// The app's data folder (its store, settings and `resident.lock`).
    pub data_dir: PathBuf,
    /// Where `resident.log` goes.
    pub log_dir: PathBuf,
    /// The window process's executable (started on Show, a notification's click, a tray conversation).
    pub app: PathBuf,
}

/// A command line that does not fit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}\n{USAGE}")]
pub struct ArgsError(String);

impl Args {
    /// Reads the arguments after the program's name. Each flag takes one value (`--flag value` or `--flag=value`).
    pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Args, ArgsError> {
        let (mut data_dir, mut log_dir, mut app) = (None, None, None);
        let mut it = args.into_iter();
        while let Some(arg) = it.next() {
            let text = arg.to_string_lossy().into_owned();
            let (flag, inline) = match text.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(OsString::from(v))),
                _ => (text.clone(), None),
            };
            let slot = match flag.as_str() {
                "--data-dir" => &mut data_dir,
                "--log-dir" => &mut log_dir,
                "--app" => &mut app,
                _ => return Err(ArgsError(format!("unknown argument {text:?}"))),
            };
            let value = inline.or_else(|| it.next()).filter(|v| !v.is_empty());
            let Some(value) = value else { return Err(ArgsError(format!("{flag} needs a value"))) };
            *slot = Some(PathBuf::from(value));
        }
        let missing = |name: &str| ArgsError(format!("{name} is missing"));
        Ok(Args {
            data_dir: data_dir.ok_or_else(|| missing("--data-dir"))?,
            log_dir: log_dir.ok_or_else(|| missing("--log-dir"))?,
            app: app.ok_or_else(|| missing("--app"))?,
        })
    }
}
