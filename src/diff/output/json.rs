//! The diff as JSON (SPEC §6, `"version": 1`; fields are added, never renamed), streamed to
//! the writer. `findings` have the shape of `chartseq lint --format json` diagnostics.
//!
//! `order` lists (before, after) resource pairs. Their number is the product of the sizes of
//! the steps involved (a group of 1000 resources newly before 1000 others is a million
//! pairs), so at most [`MAX_ORDER_PAIRS`] are listed per direction. When more exist, `order`
//! also says `"truncated": true`, the totals (`"pairs"`), and every change once per pair of
//! steps (`"steps"`): its places, how many pairs it holds, and its two resource sets by index
//! into `"sets"`, where each set of resources that share their old and new step is listed
//! once. That description is complete, and its size grows with the steps and resources, not
//! with the pairs. Below the cap the output has only the pairs, as it always had.

use std::collections::HashMap;
use std::io::{self, Write};

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use crate::diff::{Diff, Located, OrderChange, Place, Wait};
use crate::lint::{Finding, ResourceRef};
use crate::report::json::diagnostic;

/// Resource pairs listed per direction (gained, lost) before the list is cut.
pub const MAX_ORDER_PAIRS: usize = 1000;

/// Step-level changes listed per direction when the pairs are cut. Each is one line of the
/// text format; past this only their number is given.
pub const MAX_ORDER_STEPS: usize = 10_000;

#[derive(Serialize)]
struct Res<'a> {
    #[serde(rename = "apiVersion")]
    api_version: &'a str,
    kind: &'a str,
    namespace: Option<&'a str>,
    name: &'a str,
}

fn res(r: &ResourceRef) -> Res<'_> {
    Res {
        api_version: &r.api_version,
        kind: &r.kind,
        namespace: r.namespace.as_deref(),
        name: &r.name,
    }
}

#[derive(Serialize)]
struct PlaceJson<'a> {
    chart: &'a str,
    group: Option<&'a str>,
    phase: &'static str,
}

fn place(p: &Place) -> PlaceJson<'_> {
    PlaceJson {
        chart: &p.chart,
        group: p.group.as_deref(),
        phase: p.phase.as_str(),
    }
}

#[derive(Serialize)]
struct LocatedJson<'a> {
    #[serde(flatten)]
    resource: Res<'a>,
    place: PlaceJson<'a>,
}

#[derive(Serialize)]
#[serde(tag = "engine", rename_all = "lowercase")]
enum WaitJson<'a> {
    Kstatus,
    Custom {
        success: &'a [String],
        failure: &'a [String],
    },
}

fn wait(w: &Wait) -> WaitJson<'_> {
    match w {
        Wait::Kstatus => WaitJson::Kstatus,
        Wait::Custom { success, failure } => WaitJson::Custom { success, failure },
    }
}

#[derive(Serialize)]
struct PairJson<'a> {
    before: Res<'a>,
    after: Res<'a>,
    before_step: PlaceJson<'a>,
    after_step: PlaceJson<'a>,
}

/// The first `cap` (before, after) pairs of the changes, produced as they are written.
struct Pairs<'a> {
    changes: &'a [OrderChange],
    cap: usize,
}

impl Serialize for Pairs<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let pairs = self.changes.iter().flat_map(|c| {
            c.pairs().map(move |(b, a)| PairJson {
                before: res(b),
                after: res(a),
                before_step: place(&c.before_place),
                after_step: place(&c.after_place),
            })
        });
        s.collect_seq(pairs.take(self.cap))
    }
}

#[derive(Serialize)]
struct StepChangeJson<'a> {
    before_step: PlaceJson<'a>,
    after_step: PlaceJson<'a>,
    /// Indexes into `sets`.
    before: usize,
    after: usize,
    pairs: usize,
}

#[derive(Serialize)]
struct Both<T> {
    gained: T,
    lost: T,
}

/// A list produced as it is written.
struct Seq<F>(F);

impl<I, F> Serialize for Seq<F>
where
    F: Fn() -> I,
    I: Iterator<Item: Serialize>,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq((self.0)())
    }
}

/// `order`: the pairs up to the cap; past it, the totals and the step-level description.
struct Order<'a> {
    diff: &'a Diff,
    cap: usize,
}

impl<'a> Serialize for Order<'a> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let d = self.diff;
        let (gained, lost) = (d.gained_pairs(), d.lost_pairs());
        let truncated = gained > self.cap || lost > self.cap;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry(
            "gained",
            &Pairs {
                changes: &d.gained,
                cap: self.cap,
            },
        )?;
        map.serialize_entry(
            "lost",
            &Pairs {
                changes: &d.lost,
                cap: self.cap,
            },
        )?;
        if truncated {
            let steps = |changes: &'a [OrderChange]| &changes[..changes.len().min(MAX_ORDER_STEPS)];
            let listed = [steps(&d.gained), steps(&d.lost)];
            // Each cell the listed changes name, numbered in order of first mention.
            let mut index: HashMap<usize, usize> = HashMap::new();
            let mut sets: Vec<&[ResourceRef]> = Vec::new();
            for c in listed.iter().flat_map(|l| l.iter()) {
                for (cell, resources) in [(c.before_cell, &c.before), (c.after_cell, &c.after)] {
                    index.entry(cell).or_insert_with(|| {
                        sets.push(resources);
                        sets.len() - 1
                    });
                }
            }
            let step_list = |changes: &'a [OrderChange]| {
                let index = &index;
                Seq(move || {
                    changes.iter().map(move |c| StepChangeJson {
                        before_step: place(&c.before_place),
                        after_step: place(&c.after_place),
                        before: index[&c.before_cell],
                        after: index[&c.after_cell],
                        pairs: c.pair_count(),
                    })
                })
            };
            map.serialize_entry("truncated", &true)?;
            map.serialize_entry("pairs", &Both { gained, lost })?;
            map.serialize_entry(
                "step_changes",
                &Both {
                    gained: d.gained.len(),
                    lost: d.lost.len(),
                },
            )?;
            map.serialize_entry(
                "steps",
                &Both {
                    gained: step_list(listed[0]),
                    lost: step_list(listed[1]),
                },
            )?;
            map.serialize_entry(
                "sets",
                &Seq(|| sets.iter().map(|set| Seq(move || set.iter().map(res)))),
            )?;
        }
        map.end()
    }
}

#[derive(Serialize)]
struct Plans {
    old: bool,
    new: bool,
}

#[derive(Serialize)]
struct MovedJson<'a> {
    resource: Res<'a>,
    from: PlaceJson<'a>,
    to: PlaceJson<'a>,
}

#[derive(Serialize)]
struct WaitChangeJson<'a> {
    resource: Res<'a>,
    step: PlaceJson<'a>,
    from: WaitJson<'a>,
    to: WaitJson<'a>,
}

pub(super) fn write(out: &mut dyn Write, diff: &Diff) -> io::Result<()> {
    write_capped(out, diff, MAX_ORDER_PAIRS)
}

/// [`write`] with the pair cap given.
pub(crate) fn write_capped(out: &mut dyn Write, diff: &Diff, cap: usize) -> io::Result<()> {
    let mut buffered = io::BufWriter::new(&mut *out);
    let mut serializer = serde_json::Serializer::pretty(&mut buffered);
    let mut map = serializer.serialize_map(None)?;
    map.serialize_entry("version", &1)?;
    map.serialize_entry("same", &diff.is_empty())?;
    map.serialize_entry(
        "plans",
        &Plans {
            old: diff.old_planned,
            new: diff.new_planned,
        },
    )?;
    map.serialize_entry(
        "resources",
        &Added {
            added: LocatedList(&diff.added),
            removed: LocatedList(&diff.removed),
        },
    )?;
    map.serialize_entry(
        "moved",
        &Seq(|| {
            diff.moved.iter().map(|m| MovedJson {
                resource: res(&m.resource),
                from: place(&m.from),
                to: place(&m.to),
            })
        }),
    )?;
    map.serialize_entry("order", &Order { diff, cap })?;
    map.serialize_entry(
        "waits",
        &Seq(|| {
            diff.waits.iter().map(|w| WaitChangeJson {
                resource: res(&w.resource),
                step: place(&w.place),
                from: wait(&w.from),
                to: wait(&w.to),
            })
        }),
    )?;
    map.serialize_entry(
        "findings",
        &NewFixed {
            new: Findings(&diff.new_findings),
            fixed: Findings(&diff.fixed_findings),
        },
    )?;
    map.end()?;
    writeln!(buffered)?;
    buffered.flush()
}

struct LocatedList<'a>(&'a [Located]);

impl Serialize for LocatedList<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|l| LocatedJson {
            resource: res(&l.resource),
            place: place(&l.place),
        }))
    }
}

struct Findings<'a>(&'a [Finding]);

impl Serialize for Findings<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(diagnostic))
    }
}

#[derive(Serialize)]
struct Added<T> {
    added: T,
    removed: T,
}

#[derive(Serialize)]
struct NewFixed<T> {
    new: T,
    fixed: T,
}
