//! The search index's tokenizer (`tokenize = 'hermes'`): words for alphabetic scripts, bigrams for Chinese and
//! Japanese, and the letter variants a person does not type folded together.
//!
//! SQLite's `unicode61` keeps a run of Han or kana characters as one token, so `报告` never finds
//! `请帮我把报告转换成PDF格式` (neither does `PDF`, glued to the run), and it folds Latin diacritics only, so `отчет`
//! never finds `отчёт`. This tokenizer:
//! - splits text into words of letters, digits and combining marks, like `unicode61`, but also where the script changes
//!   between a CJK run and anything else (`PDF格式` is `pdf` + `格式`);
//! - folds each word: compatibility decomposition (NFKD: full-width `ＰＤＦ` is `pdf`, `ﬁ` is `fi`, half-width kana is
//!   full-width), combining marks dropped (Latin diacritics as before, and `ё`→`е`, `ї`→`і`), then lower case. The one
//!   mark kept is the breve of `й`: `й` and `и` are different letters, not variants;
//! - folds a CJK run by NFKC instead (half-width kana are full-width, and a voiced kana keeps its mark: が is not か);
//! - indexes a CJK run (Han, hiragana, katakana) as overlapping bigrams (`报告转换` → `报告` `告转` `转换`, the scheme
//!   of Lucene's CJK analyzer), each with its first character as a colocated unigram and the last character colocated
//!   with the last bigram, so one character finds its run too. A query is tokenized the same way but without the
//!   unigrams, so `报告` is one term and `报告转换` a phrase of three bigrams; a lone character is a unigram.
//!
//! Offsets always point into the original text, so `snippet()` highlights what the user wrote. Korean is written with
//! spaces and stays word-based.
//!
//! **Changing what this produces for a text needs a migration that rebuilds the index** (`INSERT INTO
//! messages_fts(messages_fts) VALUES ('rebuild')`, as v6 does): the index deletes a message by tokenizing its old text
//! again, and tokens that differ from the ones stored corrupt it.
//!
//! The tokenizer is registered for every connection this process opens ([`install`], an SQLite auto-extension):
//! a database with this index cannot be written by a connection without it (such as the stock `sqlite3` shell), which
//! fails with "no such tokenizer: hermes" and changes nothing.

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// The tokenizer's name in `CREATE VIRTUAL TABLE … tokenize = 'hermes'`.
pub const NAME: &str = "hermes";

/// What the text is tokenized for (FTS5's `FTS5_TOKENIZE_*` reason).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Indexing a document, or re-reading it for `snippet()`/`highlight()`: every token with its colocated unigrams.
    Document,
    /// A `MATCH` query: bigrams only (a lone CJK character as a unigram).
    Query,
}

/// One token: its folded text and the byte range in the original text. `colocated` tokens share the previous token's
/// position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token<'a> {
    pub text: &'a str,
    pub start: usize,
    pub end: usize,
    pub colocated: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Cjk,
    Word,
    Other,
}

/// Han (the unified ideographs and their extensions, compatibility ideographs), hiragana and katakana (with the
/// prolonged sound mark and iteration marks), half-width katakana.
fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3005}' | '\u{3007}' | '\u{3021}'..='\u{3029}' | '\u{3031}'..='\u{3035}'
        | '\u{3040}'..='\u{309F}' | '\u{30A0}'..='\u{30FF}' | '\u{31F0}'..='\u{31FF}'
        | '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}'
        | '\u{FF66}'..='\u{FF9F}' | '\u{20000}'..='\u{323AF}')
}

fn class(c: char) -> Class {
    if is_cjk(c) {
        Class::Cjk
    } else if c.is_alphanumeric() || is_combining_mark(c) {
        Class::Word
    } else {
        Class::Other
    }
}

/// Appends the folded form of `s` (NFKD, combining marks dropped except the breve after и/И, lower case) to `out`.
fn fold_into(s: &str, out: &mut String) {
    let mut prev = '\0';
    for c in s.nfkd() {
        if is_combining_mark(c) && !(c == '\u{0306}' && matches!(prev, 'и' | 'И')) {
            continue;
        }
        prev = c;
        out.extend(c.to_lowercase());
    }
}

/// Calls `emit` for each token of `text`, in order; stops early (returning the value) when `emit` returns `Err`.
pub fn tokenize<E>(text: &str, mode: Mode, mut emit: impl FnMut(Token<'_>) -> Result<(), E>) -> Result<(), E> {
    let mut buf = String::new();
    let mut chars = text.char_indices().peekable();
    // The CJK run being read: the (offset, char) of its characters, reused.
    let mut run: Vec<(usize, char)> = Vec::new();
    while let Some(&(start, c)) = chars.peek() {
        match class(c) {
            Class::Other => {
                chars.next();
            }
            Class::Word => {
                let mut end = start;
                while let Some(&(i, c)) = chars.peek() {
                    if class(c) != Class::Word {
                        break;
                    }
                    end = i + c.len_utf8();
                    chars.next();
                }
                buf.clear();
                fold_into(&text[start..end], &mut buf);
                if !buf.is_empty() {
                    emit(Token { text: &buf, start, end, colocated: false })?;
                }
            }
            Class::Cjk => {
                run.clear();
                while let Some(&(i, c)) = chars.peek() {
                    if class(c) != Class::Cjk {
                        break;
                    }
                    run.push((i, c));
                    chars.next();
                }
                cjk_run(text, &run, mode, &mut buf, &mut emit)?;
            }
        }
    }
    Ok(())
}

/// Appends the folded form of a CJK `s`: NFKC (half-width kana become full-width; a voiced mark stays with its kana,
/// が is not か) and lower case (for the odd Latin letter NFKC makes).
fn fold_cjk_into(s: &str, out: &mut String) {
    out.extend(s.nfkc().flat_map(char::to_lowercase));
}

/// Folds the CJK `text[start..end]` into `buf` and emits it as one token (nothing when nothing is left).
fn emit_folded<E>(
    text: &str,
    (start, end): (usize, usize),
    colocated: bool,
    buf: &mut String,
    emit: &mut impl FnMut(Token<'_>) -> Result<(), E>,
) -> Result<(), E> {
    buf.clear();
    fold_cjk_into(&text[start..end], buf);
    if buf.is_empty() {
        return Ok(());
    }
    emit(Token { text: buf, start, end, colocated })
}

fn cjk_run<E>(
    text: &str,
    run: &[(usize, char)],
    mode: Mode,
    buf: &mut String,
    emit: &mut impl FnMut(Token<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let span = |k: usize| (run[k].0, run[k].0 + run[k].1.len_utf8());
    if run.len() == 1 {
        return emit_folded(text, span(0), false, buf, emit);
    }
    for k in 0..run.len() - 1 {
        emit_folded(text, (span(k).0, span(k + 1).1), false, buf, emit)?;
        if mode == Mode::Document {
            emit_folded(text, span(k), true, buf, emit)?;
            if k + 2 == run.len() {
                emit_folded(text, span(k + 1), true, buf, emit)?;
            }
        }
    }
    Ok(())
}

/// [`tokenize`] over bytes that should be UTF-8 (SQLite text is, unless a writer broke it): invalid bytes separate
/// tokens, like punctuation; offsets are into `bytes`.
pub fn tokenize_bytes<E>(bytes: &[u8], mode: Mode, mut emit: impl FnMut(Token<'_>) -> Result<(), E>) -> Result<(), E> {
    let mut base = 0;
    while base < bytes.len() {
        let rest = &bytes[base..];
        let (valid, skip) = match std::str::from_utf8(rest) {
            Ok(s) => (s, 0),
            Err(e) => {
                let n = e.valid_up_to();
                // SAFETY-free: `from_utf8` just said the first `n` bytes are valid.
                (std::str::from_utf8(&rest[..n]).unwrap_or_default(), e.error_len().unwrap_or(rest.len() - n))
            }
        };
        tokenize(valid, mode, |t| emit(Token { start: base + t.start, end: base + t.end, ..t }))?;
        base += valid.len() + skip;
        if skip == 0 && valid.len() == rest.len() {
            break;
        }
    }
    Ok(())
}

/// Registers the tokenizer for every SQLite connection this process opens from now on (an auto-extension; once per
/// process, later calls do nothing). [`crate::Store`] calls it before opening; a test that opens a raw connection to a
/// store's file calls it first.
pub fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(ffi::install);
}

/// Registers the tokenizer on one connection that is already open.
pub fn register(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    ffi::register(conn)
}

/// The FFI glue: FTS5's C tokenizer interface (`fts5_tokenizer` v1, in every FTS5) around [`tokenize_bytes`]. Nothing
/// here can unwind into SQLite: a panic becomes `SQLITE_ERROR`.
#[allow(unsafe_code)]
mod ffi {
    use std::ffi::{c_char, c_int, c_void};
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::ptr::null_mut;

    use rusqlite::ffi::{
        FTS5_TOKEN_COLOCATED, FTS5_TOKENIZE_QUERY, Fts5Tokenizer, SQLITE_ERROR, SQLITE_OK, fts5_api, fts5_tokenizer,
        sqlite3, sqlite3_api_routines, sqlite3_bind_pointer, sqlite3_finalize, sqlite3_prepare_v2, sqlite3_step,
        sqlite3_stmt,
    };

    use super::{Mode, tokenize_bytes};

    type XToken = unsafe extern "C" fn(*mut c_void, c_int, *const c_char, c_int, c_int, c_int) -> c_int;

    pub(super) fn install() {
        // SAFETY: `init` does not open, close or touch other connections, nor the auto-extension list.
        if let Err(e) = unsafe { rusqlite::auto_extension::register_auto_extension(init) } {
            tracing::error!(error = %e, "could not register the search tokenizer for new connections");
        }
    }

    pub(super) fn register(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
        // SAFETY: the handle is valid while `conn` is borrowed; `register_raw` only prepares and runs one statement on
        // it and calls FTS5's own registration function.
        let rc = unsafe { register_raw(conn.handle()) };
        if rc == SQLITE_OK {
            Ok(())
        } else {
            Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rc),
                Some("registering the search tokenizer".into()),
            ))
        }
    }

    unsafe extern "C" fn init(db: *mut sqlite3, _err: *mut *mut c_char, _api: *const sqlite3_api_routines) -> c_int {
        // SAFETY: SQLite calls this with the connection being opened.
        catch_unwind(|| unsafe { register_raw(db) }).unwrap_or(SQLITE_ERROR)
    }

    /// Gets the connection's `fts5_api` (`SELECT fts5(?1)` with a pointer bound, as the FTS5 documentation shows) and
    /// creates the tokenizer on it.
    unsafe fn register_raw(db: *mut sqlite3) -> c_int {
        let mut api: *mut fts5_api = null_mut();
        let mut stmt: *mut sqlite3_stmt = null_mut();
        // SAFETY: plain SQLite C API use on a valid handle; `api` outlives the statement, which is finalized here.
        unsafe {
            let rc = sqlite3_prepare_v2(db, c"SELECT fts5(?1)".as_ptr(), -1, &mut stmt, null_mut());
            if rc != SQLITE_OK {
                return rc;
            }
            sqlite3_bind_pointer(stmt, 1, (&raw mut api).cast::<c_void>(), c"fts5_api_ptr".as_ptr(), None);
            sqlite3_step(stmt);
            let rc = sqlite3_finalize(stmt);
            if rc != SQLITE_OK {
                return rc;
            }
            let Some(create) = api.as_ref().and_then(|a| a.xCreateTokenizer) else {
                return SQLITE_ERROR;
            };
            // FTS5 copies the struct: a local is enough.
            let mut t =
                fts5_tokenizer { xCreate: Some(x_create), xDelete: Some(x_delete), xTokenize: Some(x_tokenize) };
            create(api, c"hermes".as_ptr(), null_mut(), &mut t, None)
        }
    }

    /// The tokenizer has no state: every instance is the same non-null handle.
    static INSTANCE: u8 = 0;

    unsafe extern "C" fn x_create(
        _ctx: *mut c_void,
        _args: *mut *const c_char,
        _n: c_int,
        out: *mut *mut Fts5Tokenizer,
    ) -> c_int {
        if out.is_null() {
            return SQLITE_ERROR;
        }
        // SAFETY: FTS5 passes a valid out-pointer; the handle is never dereferenced.
        unsafe { *out = (&raw const INSTANCE).cast_mut().cast::<Fts5Tokenizer>() };
        SQLITE_OK
    }

    unsafe extern "C" fn x_delete(_t: *mut Fts5Tokenizer) {}

    unsafe extern "C" fn x_tokenize(
        _t: *mut Fts5Tokenizer,
        ctx: *mut c_void,
        flags: c_int,
        text: *const c_char,
        n_text: c_int,
        x_token: Option<XToken>,
    ) -> c_int {
        let Some(x_token) = x_token else {
            return SQLITE_ERROR;
        };
        let bytes: &[u8] = match usize::try_from(n_text) {
            Ok(n) if n > 0 && !text.is_null() => {
                // SAFETY: FTS5 passes `n_text` readable bytes at `text`, alive for this call.
                unsafe { std::slice::from_raw_parts(text.cast::<u8>(), n) }
            }
            _ => &[],
        };
        let mode = if flags & FTS5_TOKENIZE_QUERY != 0 { Mode::Query } else { Mode::Document };
        let run = || {
            tokenize_bytes(bytes, mode, |t| {
                let (Ok(len), Ok(start), Ok(end)) =
                    (c_int::try_from(t.text.len()), c_int::try_from(t.start), c_int::try_from(t.end))
                else {
                    return Err(SQLITE_ERROR);
                };
                let tflags = if t.colocated { FTS5_TOKEN_COLOCATED } else { 0 };
                // SAFETY: the callback and its context come from FTS5 for this call; the token bytes live until it
                // returns.
                match unsafe { x_token(ctx, tflags, t.text.as_ptr().cast::<c_char>(), len, start, end) } {
                    SQLITE_OK => Ok(()),
                    rc => Err(rc),
                }
            })
        };
        match catch_unwind(AssertUnwindSafe(run)) {
            Ok(Ok(())) => SQLITE_OK,
            Ok(Err(rc)) => rc,
            Err(_) => SQLITE_ERROR,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str, mode: Mode) -> Vec<(String, &str, bool)> {
        let mut out = Vec::new();
        tokenize::<()>(text, mode, |t| {
            out.push((t.text.to_owned(), &text[t.start..t.end], t.colocated));
            Ok(())
        })
        .unwrap();
        out
    }

    fn terms(text: &str, mode: Mode) -> Vec<String> {
        doc(text, mode).into_iter().filter(|t| !t.2).map(|t| t.0).collect()
    }

    #[test]
    fn words_are_folded_like_unicode61_and_more() {
        assert_eq!(terms("Hello, Wörld! Café-au-lait", Mode::Document), ["hello", "world", "cafe", "au", "lait"]);
        assert_eq!(terms("Отчёт ЁЛКА", Mode::Query), ["отчет", "елка"]);
        // й is a letter of its own: not folded into и
        assert_eq!(terms("Йошкар мой", Mode::Query), ["и\u{306}ошкар", "мои\u{306}"]);
        assert_ne!(terms("мой", Mode::Query), terms("мои", Mode::Query));
        // full-width Latin, ligatures
        assert_eq!(terms("ＰＤＦ ﬁle", Mode::Query), ["pdf", "file"]);
        // combining marks written apart are folded too
        assert_eq!(terms("e\u{301}te\u{301}", Mode::Query), ["ete"]);
    }

    #[test]
    fn cjk_runs_are_bigrams_with_offsets_into_the_text() {
        let t = doc("请帮我把报告转换成PDF格式", Mode::Document);
        let bigrams: Vec<_> = t.iter().filter(|t| !t.2).map(|t| t.1).collect();
        assert_eq!(bigrams, ["请帮", "帮我", "我把", "把报", "报告", "告转", "转换", "换成", "PDF", "格式"]);
        // every character is also a colocated unigram, the last one with the last bigram
        let unigrams: Vec<_> = t.iter().filter(|t| t.2).map(|t| t.0.as_str()).collect();
        assert_eq!(unigrams, ["请", "帮", "我", "把", "报", "告", "转", "换", "成", "格", "式"]);
        assert_eq!(terms("报告转换", Mode::Query), ["报告", "告转", "转换"]);
        assert!(doc("报告转换", Mode::Query).iter().all(|t| !t.2), "no unigrams in a query");
        assert_eq!(terms("报", Mode::Query), ["报"]);
        // Japanese: kanji and kana in one run; half-width katakana folded to full width
        assert_eq!(terms("会議の資料", Mode::Query), ["会議", "議の", "の資", "資料"]);
        assert_eq!(terms("ｶﾀｶﾅ", Mode::Query), terms("カタカナ", Mode::Query));
        // Korean is word-based
        assert_eq!(terms("보고서 작성", Mode::Query).len(), 2);
        // a voiced kana is not its plain one, written whole or with the combining mark; a lone mark is a token too
        assert_ne!(terms("が", Mode::Query), terms("か", Mode::Query));
        assert_eq!(terms("が", Mode::Query), terms("か\u{3099}", Mode::Query));
        assert_eq!(terms("\u{3099}", Mode::Document).len(), 1);
    }

    #[test]
    fn invalid_utf8_separates_tokens() {
        let mut out = Vec::new();
        tokenize_bytes::<()>(b"abc\xffdef \xe6\x8a", Mode::Document, |t| {
            out.push((t.text.to_owned(), t.start, t.end));
            Ok(())
        })
        .unwrap();
        assert_eq!(out, [("abc".to_owned(), 0, 3), ("def".to_owned(), 4, 7)]);
    }

    #[test]
    fn emit_errors_stop_tokenizing() {
        let mut n = 0;
        let r = tokenize("one two three", Mode::Document, |_| {
            n += 1;
            if n == 2 { Err(7) } else { Ok(()) }
        });
        assert_eq!((r, n), (Err(7), 2));
    }
}

#[cfg(test)]
mod props {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Any text: no panic, tokens in order, offsets on character boundaries of the text, nothing empty; a query
        /// is the document's tokens without the colocated ones.
        #[test]
        fn any_text_tokenizes_within_its_bounds(text in "\\PC{0,40}|[a-zё报告会議の ,.]{0,40}") {
            let mut last = 0;
            let mut all = Vec::new();
            tokenize::<()>(&text, Mode::Document, |t| {
                assert!(!t.text.is_empty());
                assert!(t.start < t.end && t.end <= text.len());
                assert!(text.is_char_boundary(t.start) && text.is_char_boundary(t.end));
                assert!(t.start >= last || t.colocated, "{t:?} before {last}");
                if !t.colocated { last = t.start; }
                all.push((t.text.to_owned(), t.colocated));
                Ok(())
            }).unwrap();
            let mut query = Vec::new();
            tokenize::<()>(&text, Mode::Query, |t| { query.push(t.text.to_owned()); Ok(()) }).unwrap();
            let positions: Vec<String> = all.into_iter().filter(|t| !t.1).map(|t| t.0).collect();
            prop_assert_eq!(query, positions);
        }
    }
}
