//! Inputs as bytes with positions: rendered streams, chart files and where they came from.
//!
//! Every file chartseq reads is registered once in a [`SourceMap`]; spans elsewhere are byte
//! ranges into one of these files, turned into line and column only when shown.

pub mod argo_health;
pub mod chart;
pub mod discover;
pub mod git;
pub mod helm;
pub mod input;
pub mod objects;
pub mod read;
mod split;
pub mod temp;
pub mod values;

use std::fmt;

pub use split::{RawDoc, split_stream};

use crate::parse::Span;

/// Index of a file in a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// Line starts of a buffer, for byte offset to line/column conversion.
#[derive(Clone, Debug, Default)]
pub struct LineIndex {
    starts: Vec<u32>,
}

/// A 1-based line and column (column counted in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineCol {
    pub line: u32,
    pub column: u32,
}

impl LineIndex {
    #[must_use]
    pub fn new(bytes: &[u8]) -> Self {
        let mut starts = Vec::with_capacity(bytes.len() / 40 + 1);
        starts.push(0);
        starts.extend(
            bytes
                .iter()
                .enumerate()
                .filter(|&(_, &b)| b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        );
        Self { starts }
    }

    /// Line and column of a byte offset in `bytes` (the buffer this index was built from).
    #[must_use]
    pub fn line_col(&self, bytes: &[u8], offset: u32) -> LineCol {
        let line = self
            .starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        let start = self.starts[line] as usize;
        let end = (offset as usize).min(bytes.len()).max(start);
        let column = String::from_utf8_lossy(&bytes[start..end]).chars().count();
        LineCol {
            line: line as u32 + 1,
            column: column as u32 + 1,
        }
    }

    /// Byte range of a 1-based line, without its newline.
    #[must_use]
    pub fn line_range(&self, bytes: &[u8], line: u32) -> Option<std::ops::Range<usize>> {
        let idx = (line as usize).checked_sub(1)?;
        let start = *self.starts.get(idx)? as usize;
        let end = self
            .starts
            .get(idx + 1)
            .map_or(bytes.len(), |&e| (e as usize).saturating_sub(1));
        Some(start..end.max(start))
    }

    #[must_use]
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }
}

/// Where a file's bytes came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Standard input.
    Stdin,
    /// A file on disk; the name is as the user would type it (relative to the current directory
    /// when possible).
    Disk,
    /// A member of a chart archive: `archive.tgz:member/path`.
    Archive,
    /// Produced by running `helm template`.
    Rendered,
}

/// One registered input file.
#[derive(Debug)]
pub struct SourceFile {
    /// Display name (a path, `-` for stdin, `archive.tgz:inner/path` for archive members).
    pub name: String,
    pub origin: Origin,
    pub bytes: Vec<u8>,
    /// Built on first use: most runs never show a position of most files.
    lines: std::sync::OnceLock<LineIndex>,
}

impl SourceFile {
    /// The file's line index.
    pub fn lines(&self) -> &LineIndex {
        self.lines.get_or_init(|| LineIndex::new(&self.bytes))
    }

    #[must_use]
    pub fn line_col(&self, offset: u32) -> LineCol {
        self.lines().line_col(&self.bytes, offset)
    }

    /// The text of a span, lossily decoded.
    #[must_use]
    pub fn text(&self, span: Span) -> std::borrow::Cow<'_, str> {
        let range = span.start as usize..(span.end as usize).min(self.bytes.len());
        String::from_utf8_lossy(self.bytes.get(range).unwrap_or_default())
    }
}

/// All files of one run.
#[derive(Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn add(&mut self, name: impl Into<String>, origin: Origin, bytes: Vec<u8>) -> FileId {
        self.files.push(SourceFile {
            name: name.into(),
            origin,
            bytes,
            lines: std::sync::OnceLock::new(),
        });
        FileId(self.files.len() as u32 - 1)
    }

    #[must_use]
    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.files.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The file whose display name is `name`.
    #[must_use]
    pub fn find(&self, name: &str) -> Option<FileId> {
        self.files
            .iter()
            .position(|f| f.name == name)
            .map(|i| FileId(i as u32))
    }
}

/// A position in a registered file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Loc {
    pub file: FileId,
    pub span: Span,
}

impl fmt::Display for FileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "file#{}", self.0)
    }
}

/// Turns a path into the form a user would type: relative to the current directory, whatever
/// way it was named (`.`, `./chart/`, an absolute path, `..`, through a symbolic link), the
/// way ruff shows paths. The current directory itself is `.`.
///
/// A relative path without `..` is already relative to the current directory and is kept as
/// written (`.` segments dropped), so a symbolic link named on the command line stays the
/// name the user typed. Anything else is resolved by the file system (`..` after a link
/// leads where the kernel says, not where the text says) and shown below the current
/// directory when it lies there, else with `..` steps, else absolute.
#[must_use]
pub fn display_path(path: &std::path::Path) -> String {
    use std::path::Component;
    let text = |p: &std::path::Path| {
        let t = p.to_string_lossy().replace('\\', "/");
        if t.is_empty() { ".".to_owned() } else { t }
    };
    let plain_relative = path.is_relative()
        && !path
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::Prefix(_)));
    if plain_relative {
        let kept: std::path::PathBuf = path
            .components()
            .filter(|c| !matches!(c, Component::CurDir))
            .collect();
        return text(&kept);
    }
    let Ok(cwd) = std::env::current_dir() else {
        return text(path);
    };
    // The shell's idea of the current directory, when it names the same place: an absolute
    // path through a linked working directory is still below it.
    let logical = std::env::var_os("PWD")
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_absolute() && same_place(p, &cwd));
    if path.is_absolute() && !path.components().any(|c| c == Component::ParentDir) {
        for base in logical.iter().chain(std::iter::once(&cwd)) {
            if let Ok(rel) = path.strip_prefix(base) {
                return display_path(rel);
            }
        }
    }
    let absolute = cwd.join(path);
    // A link named last stays the link (`charts/self`, not where it leads): only the
    // directories above it are resolved.
    let resolved = match absolute.components().next_back() {
        Some(Component::Normal(name)) => absolute.parent().map_or_else(
            || absolute.canonicalize(),
            |parent| parent.canonicalize().map(|p| p.join(name)),
        ),
        _ => absolute.canonicalize(),
    };
    let (resolved, base) = match (resolved, cwd.canonicalize()) {
        (Ok(resolved), Ok(base)) => (resolved, base),
        _ => (lexical(&absolute), lexical(&cwd)),
    };
    text(&relative_to(&resolved, &base))
}

/// Whether two directories are the same one (same device and inode where that is known).
fn same_place(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Drops `.` and folds `..` in the text of a path (`sub/../charts` is `charts`), so that a
/// path given with `..` is still recognised as inside a directory.
pub(crate) fn lexical(path: &std::path::Path) -> std::path::PathBuf {
    use std::path::Component;
    let mut out = std::path::PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(component);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// `path` relative to `base` (both absolute and resolved): below it, or with `..` steps when
/// they share more than the file system root, else `path` itself.
fn relative_to(path: &std::path::Path, base: &std::path::Path) -> std::path::PathBuf {
    if let Ok(rel) = path.strip_prefix(base) {
        return rel.to_path_buf();
    }
    let ours: Vec<_> = path.components().collect();
    let theirs: Vec<_> = base.components().collect();
    let shared = ours.iter().zip(&theirs).take_while(|(a, b)| a == b).count();
    // Only the root (and, on Windows, the drive) in common: an absolute path reads better.
    if shared <= 1 {
        return path.to_path_buf();
    }
    let mut out = std::path::PathBuf::new();
    for _ in shared..theirs.len() {
        out.push("..");
    }
    for c in &ours[shared..] {
        out.push(c);
    }
    out
}

/// A file of a chart shown by the display name of the chart root and its path in the chart:
/// `templates/x.yaml` in the chart `.` is `templates/x.yaml`, not `./templates/x.yaml`.
#[must_use]
pub fn display_join(root: &str, rel: &str) -> String {
    match root {
        "" | "." => rel.to_owned(),
        _ if root.ends_with('/') => format!("{root}{rel}"),
        _ => format!("{root}/{rel}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters() {
        let bytes = "ab\né: x\n".as_bytes();
        let index = LineIndex::new(bytes);
        assert_eq!(index.line_col(bytes, 0), LineCol { line: 1, column: 1 });
        let x = "ab\né: ".len() as u32;
        assert_eq!(index.line_col(bytes, x), LineCol { line: 2, column: 4 });
        assert_eq!(index.line_range(bytes, 2), Some(3..bytes.len() - 1));
    }

    #[test]
    fn paths_are_shown_relative_to_the_current_directory() {
        use std::path::Path;
        assert_eq!(display_path(Path::new(".")), ".");
        assert_eq!(display_path(Path::new("./")), ".");
        assert_eq!(display_path(Path::new("./chart/")), "chart");
        assert_eq!(display_path(Path::new("a/./b")), "a/b");
        let cwd = std::env::current_dir().expect("cwd");
        assert_eq!(display_path(&cwd), ".");
        assert_eq!(display_path(&cwd.join("src")), "src");
        assert_eq!(display_path(&cwd.join("src/../src/lib.rs")), "src/lib.rs");
        let name = cwd
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        assert_eq!(display_path(&Path::new("..").join(&name)), ".");
        assert_eq!(display_path(Path::new("..")), "..");
        assert_eq!(display_join(".", "templates/x.yaml"), "templates/x.yaml");
        assert_eq!(
            display_join("..", "templates/x.yaml"),
            "../templates/x.yaml"
        );
        assert_eq!(display_join("c", "Chart.yaml"), "c/Chart.yaml");
    }

    #[test]
    fn relative_paths_step_up_only_below_a_shared_directory() {
        use std::path::Path;
        assert_eq!(
            relative_to(Path::new("/r/a/x"), Path::new("/r/b/c")),
            Path::new("../../a/x")
        );
        assert_eq!(
            relative_to(Path::new("/r/a"), Path::new("/r/a")),
            Path::new("")
        );
        assert_eq!(
            relative_to(Path::new("/tmp/x"), Path::new("/r/b")),
            Path::new("/tmp/x")
        );
    }
}
