//! `history`, `status` and `list` as helm prints them (its columns, its time format, cells
//! padded then a tab), or as JSON.

use std::fmt::Write as _;
use std::io::Write;

use serde_json::json;

use crate::apply::release::Record;

/// `chartseq history`: Helm's columns, with the failed runs' blocked resources under their
/// row; or one JSON line per revision.
pub fn write_history(out: &mut dyn Write, records: &[Record], json: bool) -> std::io::Result<()> {
    if json {
        for r in records {
            writeln!(
                out,
                "{}",
                json!({"revision": r.revision, "updated": r.updated(), "status": r.status, "chart": r.chart(),
                    "app_version": r.app_version(), "description": r.description, "sequenced": r.sequenced, "report": r.report})
            )?;
        }
        return Ok(());
    }
    let rows: Vec<Vec<String>> = records
        .iter()
        .map(|r| {
            vec![
                r.revision.to_string(),
                helm_time(r.updated()),
                r.status.clone(),
                r.chart(),
                r.app_version().to_owned(),
                r.description.lines().next().unwrap_or_default().to_owned(),
            ]
        })
        .collect();
    let more: Vec<Vec<String>> = records
        .iter()
        .map(|r| r.description.lines().skip(1).map(str::to_owned).collect())
        .collect();
    write_table(
        out,
        &[
            "REVISION",
            "UPDATED",
            "STATUS",
            "CHART",
            "APP VERSION",
            "DESCRIPTION",
        ],
        &rows,
        &more,
    )
}

/// `chartseq status --output json`: the latest revision and its recorded plan.
pub fn write_status_json(out: &mut dyn Write, r: &Record) -> std::io::Result<()> {
    let steps: Vec<_> = r.steps.iter().map(|s| json!({"step": s.label, "resources": s.resources.iter().map(|&i| r.items[i].label()).collect::<Vec<_>>()})).collect();
    writeln!(
        out,
        "{}",
        json!({"name": r.name, "namespace": r.namespace, "revision": r.revision, "status": r.status,
            "updated": r.updated(), "chart": r.chart(), "sequenced": r.sequenced, "description": r.description,
            "steps": steps, "report": r.report})
    )
}

/// `chartseq status`: the latest revision, its recorded plan with each object's `live` state
/// (label and state, by item), and how its run went.
pub fn write_status(
    out: &mut dyn Write,
    r: &Record,
    live: &[(String, String)],
) -> std::io::Result<()> {
    writeln!(
        out,
        "NAME: {}\nLAST DEPLOYED: {}\nNAMESPACE: {}\nSTATUS: {}\nREVISION: {}\nCHART: {}\nSEQUENCED: {}",
        r.name,
        helm_time(r.updated()),
        r.namespace,
        r.status,
        r.revision,
        r.chart(),
        r.sequenced
    )?;
    let mut description = r.description.lines();
    writeln!(
        out,
        "DESCRIPTION: {}",
        description.next().unwrap_or_default()
    )?;
    for more in description {
        writeln!(out, "  {more}")?;
    }
    writeln!(out, "RESOURCES (install order, live state):")?;
    for s in &r.steps {
        writeln!(out, "  {}", s.label)?;
        for &i in &s.resources {
            let (label, state) = &live[i];
            writeln!(out, "    {label}: {state}")?;
        }
    }
    if let Some(report) = &r.report {
        writeln!(out, "LAST RUN:")?;
        super::apply_summary::write_report(out, report)?;
    }
    Ok(())
}

/// `chartseq list`: the latest revision of each release, as `helm list` shows them; or one
/// JSON array.
pub fn write_list(out: &mut dyn Write, releases: &[Record], json: bool) -> std::io::Result<()> {
    if json {
        let list: Vec<_> = releases
            .iter()
            .map(|r| {
                json!({"name": r.name, "namespace": r.namespace, "revision": r.revision.to_string(),
                    "updated": helm_time(r.updated()), "status": r.status, "chart": r.chart(),
                    "app_version": r.app_version(), "sequenced": r.sequenced})
            })
            .collect();
        return writeln!(out, "{}", serde_json::Value::Array(list));
    }
    let rows: Vec<Vec<String>> = releases
        .iter()
        .map(|r| {
            vec![
                r.name.clone(),
                r.namespace.clone(),
                r.revision.to_string(),
                helm_time(r.updated()),
                r.status.clone(),
                r.chart(),
                r.app_version().to_owned(),
            ]
        })
        .collect();
    write_table(
        out,
        &[
            "NAME",
            "NAMESPACE",
            "REVISION",
            "UPDATED",
            "STATUS",
            "CHART",
            "APP VERSION",
        ],
        &rows,
        &[],
    )
}

/// A stored Go timestamp as `helm list` prints it (`2006-01-02 15:04:05.999999999 +0000
/// UTC`); anything else as stored.
fn helm_time(rfc3339: &str) -> String {
    if rfc3339.is_empty() {
        // Helm prints a zero time so.
        return "-".to_owned();
    }
    match rfc3339.strip_suffix('Z') {
        Some(t) if t.len() >= 19 => format!("{} +0000 UTC", t.replacen('T', " ", 1)),
        _ => rfc3339.to_owned(),
    }
}

/// A table as helm prints one (cells padded, then a tab), each row followed by its `more`
/// lines, indented.
fn write_table(
    out: &mut dyn Write,
    headers: &[&str],
    rows: &[Vec<String>],
    more: &[Vec<String>],
) -> std::io::Result<()> {
    let widths: Vec<usize> = (0..headers.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].len())
                .chain([headers[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut text = String::new();
        for (c, cell) in cells.enumerate() {
            let _ = write!(text, "{cell:<w$}\t", w = widths[c]);
        }
        text.trim_end().to_owned()
    };
    writeln!(out, "{}", line(&mut headers.iter().copied()))?;
    for (i, row) in rows.iter().enumerate() {
        writeln!(out, "{}", line(&mut row.iter().map(String::as_str)))?;
        for extra in more.get(i).into_iter().flatten() {
            writeln!(out, "  {extra}")?;
        }
    }
    Ok(())
}
