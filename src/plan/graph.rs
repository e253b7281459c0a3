//! The one graph layer, on petgraph: dependency graphs of named nodes (the groups of one chart
//! level, the subcharts of one chart) and the step graph of a plan.
//!
//! A named graph gives topological batches (Kahn's algorithm, each batch sorted by name: SPEC
//! §2) or, when some nodes can never be scheduled, one cycle *path* per strongly connected
//! component with the label of every edge (where the annotation that declares it is). The
//! planner and the cycle rules (CS001, CS002) read the same result, so `plan` failing and
//! `lint` reporting can never disagree. The step graph answers "is step A complete before step
//! B starts" for lint and draws the DOT and Mermaid outputs.
//!
//! NOTE: everything here is iterative and linear (or near it) in nodes and edges: a chart may
//! chain 100 000 groups, and the hostile-input tests hold us to it. So no recursion — petgraph's
//! `tarjan_scc` recurses once per node and overflows the stack on such a chain, its
//! `kosaraju_scc` keeps its own stack — and no transitive closure, which is quadratic.

use std::collections::{HashSet, VecDeque};

use petgraph::Direction::{Incoming, Outgoing};
use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;

use super::Step;

/// A cycle as a path that starts and ends at its smallest node, in "depends on" direction
/// (`["db", "app", "db"]`: db depends on app, app depends on db). `edges[i]` is the label of
/// the edge from `path[i]` to `path[i + 1]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle<E> {
    pub path: Vec<String>,
    pub edges: Vec<E>,
}

/// Named nodes and labelled "depends on" edges: an edge `a -> b` says `a` depends on `b`, and
/// its label says where that is declared.
#[derive(Clone, Debug)]
pub struct DepGraph<E> {
    /// Nodes are added in name order, so node indices sort like names.
    graph: DiGraph<String, E>,
    edges: HashSet<(NodeIndex, NodeIndex)>,
}

impl<E: Clone> DepGraph<E> {
    /// A graph of these nodes (repeated names are one node) and no edges yet.
    #[must_use]
    pub fn new(names: impl IntoIterator<Item = String>) -> Self {
        let mut names: Vec<String> = names.into_iter().collect();
        names.sort_unstable();
        names.dedup();
        let mut graph = DiGraph::with_capacity(names.len(), names.len());
        for name in names {
            graph.add_node(name);
        }
        Self {
            graph,
            edges: HashSet::new(),
        }
    }

    fn node(&self, name: &str) -> Option<NodeIndex> {
        self.graph
            .raw_nodes()
            .binary_search_by(|n| n.weight.as_str().cmp(name))
            .ok()
            .map(NodeIndex::new)
    }

    /// Records that `node` depends on `on`, declared at `label`. A name that is not a node is
    /// ignored (callers deal with missing prerequisites first), and so is an edge already
    /// recorded: the first declaration is the one reported.
    pub fn depend(&mut self, node: &str, on: &str, label: E) {
        let (Some(a), Some(b)) = (self.node(node), self.node(on)) else {
            return;
        };
        if self.edges.insert((a, b)) {
            self.graph.add_edge(a, b, label);
        }
    }

    /// Topological batches by Kahn's algorithm, each sorted by name; `Err` with every cycle
    /// when some nodes can never be scheduled.
    pub fn batches(&self) -> Result<Vec<Vec<String>>, Vec<Cycle<E>>> {
        let g = &self.graph;
        // Prerequisites not yet scheduled, per node (a self-loop counts: it never is).
        let mut waiting: Vec<usize> = g
            .node_indices()
            .map(|n| g.edges_directed(n, Outgoing).count())
            .collect();
        let mut ready: Vec<NodeIndex> = g
            .node_indices()
            .filter(|n| waiting[n.index()] == 0)
            .collect();
        let mut batches = Vec::new();
        let mut done = 0;
        while !ready.is_empty() {
            ready.sort_unstable();
            done += ready.len();
            let mut next = Vec::new();
            for &node in &ready {
                for edge in g.edges_directed(node, Incoming) {
                    let dependent = edge.source();
                    waiting[dependent.index()] -= 1;
                    if waiting[dependent.index()] == 0 {
                        next.push(dependent);
                    }
                }
            }
            batches.push(ready.iter().map(|&n| g[n].clone()).collect());
            ready = next;
        }
        if done == g.node_count() {
            Ok(batches)
        } else {
            Err(self.cycles())
        }
    }

    /// Every cycle, one per strongly connected component that holds one (a self-loop
    /// included): the shortest way from the component's smallest node back to itself, taking
    /// edges in name order, so the report is the same on every run. Sorted by path.
    #[must_use]
    pub fn cycles(&self) -> Vec<Cycle<E>> {
        let g = &self.graph;
        let components = petgraph::algo::kosaraju_scc(g);
        let mut component_of = vec![usize::MAX; g.node_count()];
        for (c, members) in components.iter().enumerate() {
            for n in members {
                component_of[n.index()] = c;
            }
        }
        // Shared by every search: components are disjoint and each search stays in its own.
        let mut previous: Vec<Option<(NodeIndex, EdgeIndex)>> = vec![None; g.node_count()];
        let mut cycles: Vec<Cycle<E>> = components
            .iter()
            .enumerate()
            .filter_map(|(c, members)| {
                let start = *members.iter().min()?;
                if members.len() == 1 && g.find_edge(start, start).is_none() {
                    return None;
                }
                let nodes =
                    shortest_cycle(g, start, |n| component_of[n.index()] == c, &mut previous)?;
                Some(Cycle {
                    path: nodes.iter().map(|&(n, _)| g[n].clone()).collect(),
                    edges: nodes
                        .iter()
                        .filter_map(|&(_, e)| e)
                        .map(|e| g[e].clone())
                        .collect(),
                })
            })
            .collect();
        cycles.sort_by(|a, b| a.path.cmp(&b.path));
        cycles
    }
}

/// Breadth-first search for the shortest way from `start` back to itself through nodes that
/// are `inside`; each node with the edge that leaves it along the path (`None` for the last).
fn shortest_cycle<N, E>(
    g: &DiGraph<N, E>,
    start: NodeIndex,
    inside: impl Fn(NodeIndex) -> bool,
    previous: &mut [Option<(NodeIndex, EdgeIndex)>],
) -> Option<Vec<(NodeIndex, Option<EdgeIndex>)>> {
    let mut queue = VecDeque::from([start]);
    let mut out: Vec<(NodeIndex, EdgeIndex)> = Vec::new();
    while let Some(v) = queue.pop_front() {
        out.clear();
        out.extend(g.edges_directed(v, Outgoing).map(|e| (e.target(), e.id())));
        out.sort_unstable();
        for &(w, edge) in &out {
            if w == start {
                // Walk back from v to start, then read it forwards and close the loop.
                let mut path = vec![(start, None), (v, Some(edge))];
                let mut cur = v;
                while cur != start {
                    let (before, via) = previous[cur.index()]?;
                    path.push((before, Some(via)));
                    cur = before;
                }
                path.reverse();
                return Some(path);
            }
            if inside(w) && previous[w.index()].is_none() {
                previous[w.index()] = Some((v, edge));
                queue.push_back(w);
            }
        }
    }
    None
}

/// The steps of a plan and who waits for whom, for steps listed so that each waits only for
/// earlier ones (the planner's order, install or uninstall): the list order is a topological
/// order, which the reachability queries use to prune.
#[derive(Clone, Debug)]
pub struct StepGraph {
    /// An edge `a -> b` when step `b` waits for step `a` (the install direction).
    graph: DiGraph<(), ()>,
    /// The same edges as (prerequisite, step), for constant-time lookups.
    direct: HashSet<(usize, usize)>,
    /// Length of the longest chain of prerequisites that ends at each step.
    depth: Vec<u32>,
    /// Entry and exit numbers of each step in a spanning forest whose edges are real edges
    /// (each step under one of its prerequisites): a step inside another's interval is
    /// certainly after it.
    enter: Vec<u32>,
    exit: Vec<u32>,
}

impl StepGraph {
    #[must_use]
    pub fn new(steps: &[Step]) -> Self {
        let n = steps.len();
        let mut graph = DiGraph::with_capacity(n, 0);
        for _ in steps {
            graph.add_node(());
        }
        let mut depth = vec![0u32; n];
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        let mut direct = HashSet::new();
        for (i, step) in steps.iter().enumerate() {
            for &before in &step.after {
                if before < n && direct.insert((before, i)) {
                    graph.add_edge(NodeIndex::new(before), NodeIndex::new(i), ());
                }
            }
            // Only prerequisites listed earlier take part in the order (the others are not
            // a topological order and would make the pruning wrong).
            let earlier = step.after.iter().copied().filter(|&b| b < i);
            match earlier.max_by_key(|&b| (depth[b], b)) {
                Some(parent) => {
                    depth[i] = depth[parent] + 1;
                    children[parent].push(i as u32);
                }
                None => roots.push(i as u32),
            }
        }
        let (mut enter, mut exit) = (vec![0u32; n], vec![0u32; n]);
        let mut clock = 0u32;
        let mut stack: Vec<(u32, usize)> = Vec::new();
        for root in roots {
            enter[root as usize] = clock;
            clock += 1;
            stack.push((root, 0));
            while let Some((v, next)) = stack.last_mut() {
                let v = *v as usize;
                if let Some(&child) = children[v].get(*next) {
                    *next += 1;
                    enter[child as usize] = clock;
                    clock += 1;
                    stack.push((child, 0));
                } else {
                    exit[v] = clock;
                    clock += 1;
                    stack.pop();
                }
            }
        }
        Self {
            graph,
            direct,
            depth,
            enter,
            exit,
        }
    }

    /// Number of steps.
    #[must_use]
    pub fn len(&self) -> usize {
        self.graph.node_count()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every edge as (prerequisite, step), by step, then prerequisite.
    #[must_use]
    pub fn edges(&self) -> Vec<(usize, usize)> {
        let mut edges: Vec<(usize, usize)> = self
            .graph
            .raw_edges()
            .iter()
            .map(|e| (e.target().index(), e.source().index()))
            .collect();
        edges.sort_unstable();
        edges
            .into_iter()
            .map(|(step, before)| (before, step))
            .collect()
    }

    /// A constant-time certificate that `later` waits for `earlier`: a direct edge, or
    /// `later` under `earlier` in the spanning forest.
    fn surely(&self, earlier: usize, later: usize) -> bool {
        self.direct.contains(&(earlier, later))
            || (self.enter[earlier] <= self.enter[later] && self.exit[later] <= self.exit[earlier])
    }

    /// Whether step `earlier` is complete (ready) before step `later` starts: whether `later`
    /// waits for it, directly or not.
    ///
    /// Constant time when a direct edge or the spanning forest proves it, or the order rules
    /// it out (`later` listed first, or no longer a chain of prerequisites behind it);
    /// otherwise a search back from `later` that skips every step listed before `earlier` or
    /// with a chain no longer than its own, and stops at the first step proven to wait for it.
    /// No closure is ever built: memory stays linear, and a query is at worst linear in the
    /// steps and edges between the two.
    #[must_use]
    pub fn before(&self, earlier: usize, later: usize) -> bool {
        let n = self.len();
        if earlier >= later || later >= n {
            return false;
        }
        if self.surely(earlier, later) {
            return true;
        }
        let floor = self.depth[earlier];
        if self.depth[later] <= floor {
            return false;
        }
        let mut seen: HashSet<usize> = HashSet::new();
        let mut stack = vec![later];
        while let Some(v) = stack.pop() {
            for e in self.graph.edges_directed(NodeIndex::new(v), Incoming) {
                let p = e.source().index();
                if p == earlier {
                    return true;
                }
                if p < earlier || p >= v || self.depth[p] <= floor {
                    continue;
                }
                if self.surely(earlier, p) {
                    return true;
                }
                if seen.insert(p) {
                    stack.push(p);
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(pairs: &[(&str, &[&str])]) -> DepGraph<String> {
        let mut g = DepGraph::new(pairs.iter().map(|(n, _)| (*n).to_owned()));
        for (n, deps) in pairs {
            for d in *deps {
                g.depend(n, d, format!("{n}->{d}"));
            }
        }
        g
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn batches_are_sorted_levels() {
        let g = graph(&[
            ("web", &["app"]),
            ("app", &["queue", "db", "ghost"]),
            ("queue", &[]),
            ("db", &[]),
        ]);
        assert_eq!(
            g.batches(),
            Ok(vec![
                names(&["db", "queue"]),
                names(&["app"]),
                names(&["web"])
            ])
        );
    }

    #[test]
    fn cycles_are_reported_as_paths_with_their_labels() {
        let g = graph(&[("db", &["app"]), ("app", &["db"]), ("x", &[])]);
        assert_eq!(
            g.batches(),
            Err(vec![Cycle {
                path: names(&["app", "db", "app"]),
                edges: names(&["app->db", "db->app"]),
            }])
        );
        let g = graph(&[("a", &["a"])]);
        assert_eq!(
            g.cycles(),
            vec![Cycle {
                path: names(&["a", "a"]),
                edges: names(&["a->a"]),
            }]
        );
        // The shortest way back from the smallest node, edges taken in name order.
        let g = graph(&[
            ("a", &["c", "b"]),
            ("b", &["c"]),
            ("c", &["a"]),
            ("d", &["c"]),
            ("e", &["f"]),
            ("f", &["e"]),
        ]);
        assert_eq!(
            g.cycles(),
            vec![
                Cycle {
                    path: names(&["a", "c", "a"]),
                    edges: names(&["a->c", "c->a"]),
                },
                Cycle {
                    path: names(&["e", "f", "e"]),
                    edges: names(&["e->f", "f->e"]),
                },
            ]
        );
    }

    #[test]
    fn repeated_edges_keep_the_first_label() {
        let mut g = graph(&[("a", &["b"]), ("b", &["a"])]);
        g.depend("a", "b", "again".to_owned());
        assert_eq!(g.cycles()[0].edges, names(&["a->b", "b->a"]));
    }

    #[test]
    fn a_long_chain_closed_into_a_cycle_does_not_recurse() {
        let n = 100_000;
        let mut g: DepGraph<usize> = DepGraph::new((0..n).map(|i| format!("g{i:06}")));
        for i in 1..n {
            g.depend(&format!("g{i:06}"), &format!("g{:06}", i - 1), i);
        }
        assert_eq!(g.batches().map(|b| b.len()), Ok(n));
        g.depend("g000000", &format!("g{:06}", n - 1), 0);
        let cycles = g.cycles();
        assert_eq!(cycles.len(), 1);
        assert_eq!(cycles[0].path.len(), n + 1);
        assert_eq!(cycles[0].path[1], format!("g{:06}", n - 1));
        assert_eq!(cycles[0].edges[..2], [0, n - 1]);
    }

    fn steps(after: &[Vec<usize>]) -> Vec<Step> {
        after
            .iter()
            .map(|a| Step {
                chart: 0,
                group: None,
                resources: Vec::new(),
                after: a.clone(),
            })
            .collect()
    }

    #[test]
    fn before_agrees_with_the_transitive_closure() {
        // Pseudo-random DAGs (a fixed linear congruential sequence), checked pair by pair
        // against a closure computed the slow way.
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |m: usize| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) as usize % m
        };
        for round in 0..30 {
            let n = 2 + round * 2;
            let after: Vec<Vec<usize>> = (0..n)
                .map(|i| {
                    let mut a: Vec<usize> =
                        (0..next(4)).filter(|_| i > 0).map(|_| next(i)).collect();
                    a.sort_unstable();
                    a.dedup();
                    a
                })
                .collect();
            let mut closure = vec![vec![false; n]; n];
            for (i, a) in after.iter().enumerate() {
                for &p in a {
                    closure[i][p] = true;
                    let inherited = closure[p].clone();
                    for (q, yes) in inherited.into_iter().enumerate() {
                        closure[i][q] |= yes;
                    }
                }
            }
            let g = StepGraph::new(&steps(&after));
            for (later, row) in closure.iter().enumerate() {
                for (earlier, &expected) in row.iter().enumerate() {
                    assert_eq!(
                        g.before(earlier, later),
                        expected,
                        "{earlier} before {later} in {after:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn before_stays_fast_on_a_long_chain_and_a_wide_fan() {
        let n = 100_000;
        let chain: Vec<Vec<usize>> = (0..n)
            .map(|i| if i == 0 { vec![] } else { vec![i - 1] })
            .collect();
        let g = StepGraph::new(&steps(&chain));
        // Every query is answered by the spanning forest: n queries, no walk down the chain.
        assert!((1..n).all(|i| g.before(0, i) && g.before(i - 1, i) && !g.before(i, i - 1)));
        // A fan: one step after 100k independent ones, then a second level of pairs.
        let mut fan: Vec<Vec<usize>> = vec![Vec::new(); n];
        fan.push((0..n).collect());
        let g = StepGraph::new(&steps(&fan));
        assert!((0..n).all(|i| g.before(i, n)));
        assert!(!g.before(1, 2));
        // And one step further: each query stops one edge down.
        let mut deeper = fan;
        deeper.push(vec![n]);
        let g = StepGraph::new(&steps(&deeper));
        assert!((0..n).all(|i| g.before(i, n + 1)));
    }

    #[test]
    fn edges_are_listed_by_step_then_prerequisite() {
        let g = StepGraph::new(&steps(&[vec![], vec![0], vec![0, 1]]));
        assert_eq!(g.edges(), vec![(0, 1), (0, 2), (1, 2)]);
    }
}
