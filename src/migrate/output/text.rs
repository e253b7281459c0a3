//! `chartseq migrate` as text: the unified diff on standard output (so that it can be piped
//! to `git apply` or `patch`), and the proof, readable, on standard error.

use std::io::{self, Write};

use crate::migrate::Migration;

/// Writes the diff.
pub fn write_diff(out: &mut dyn Write, m: &Migration) -> io::Result<()> {
    out.write_all(m.diff.as_bytes())
}

/// Writes the proof and what is left to do by hand.
pub fn write_report(out: &mut dyn Write, chart: &str, m: &Migration) -> io::Result<()> {
    let Some(from) = m.from else {
        return writeln!(
            out,
            "{chart}: no ordering annotations of werf, Argo CD, kapp, KOTS or the draft HIP: nothing to migrate"
        );
    };
    writeln!(
        out,
        "Migrating {chart} from {} (--from {}) to HIP-0025",
        from.named(),
        from.name()
    )?;
    if !m.chains.is_empty() {
        // Ordinal dialects make chains; kapp's classes form a DAG.
        let (title, sep) = if from == crate::plan::Dialect::Kapp {
            ("Groups per chart level:", ", ")
        } else {
            ("Groups, in order, per chart level:", " -> ")
        };
        writeln!(out, "{title}")?;
        for (level, groups) in &m.chains {
            writeln!(out, "  {level}: {}", groups.join(sep))?;
        }
    }
    let added: usize = m.edits.iter().map(|e| e.added.len()).sum();
    let removed: usize = m.edits.iter().map(|e| e.removed.len()).sum();
    let mut files: Vec<&str> = m.edits.iter().map(|e| e.file.as_str()).collect();
    files.dedup();
    let applied = if m.written.is_empty() {
        "the diff is on standard output; --write applies it"
    } else {
        "written"
    };
    writeln!(
        out,
        "Edits: {} added, {removed} removed, in {} ({applied})",
        plural(added, "line", "lines"),
        plural(files.len(), "file", "files")
    )?;
    if !m.manual.is_empty() {
        writeln!(out, "Manual edits ({}):", m.manual.len())?;
        for e in &m.manual {
            let what = e
                .resource
                .as_ref()
                .map(|r| format!("{r}: "))
                .unwrap_or_default();
            writeln!(out, "  {}:{}: {what}{}", e.file, e.line, e.reason)?;
            for line in e.snippet.lines() {
                writeln!(out, "      {line}")?;
            }
        }
    }
    writeln!(
        out,
        "Proof (the migrated chart rendered with helm, planned with HIP-0025, against {}'s order):",
        from.named()
    )?;
    writeln!(
        out,
        "  kept: {}",
        plural(m.proof.kept, "ordering constraint", "ordering constraints")
    )?;
    writeln!(out, "  lost: {}", m.proof.lost.len())?;
    for l in &m.proof.lost {
        if l.before == l.after {
            writeln!(out, "    {}: {}", l.before, l.reason)?;
        } else {
            writeln!(out, "    {} before {}: {}", l.before, l.after, l.reason)?;
        }
    }
    writeln!(out, "  stricter: {}", m.proof.stricter.len())?;
    for s in &m.proof.stricter {
        writeln!(out, "    {}: {}", s.resource, s.reason)?;
    }
    Ok(())
}

/// Why `--strict` fails: every lost order (its reason is in the report) and every pending
/// manual edit, one a line.
pub fn write_strict(out: &mut dyn Write, m: &Migration) -> io::Result<()> {
    writeln!(
        out,
        "--strict: not complete: {} lost, {} pending",
        plural(m.proof.lost.len(), "order", "orders"),
        plural(m.manual.len(), "manual edit", "manual edits")
    )?;
    for l in &m.proof.lost {
        if l.before == l.after {
            writeln!(out, "  lost: {}", l.before)?;
        } else {
            writeln!(out, "  lost: {} before {}", l.before, l.after)?;
        }
    }
    for e in &m.manual {
        writeln!(out, "  manual edit: {}:{}", e.file, e.line)?;
    }
    Ok(())
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
