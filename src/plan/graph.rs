//! Dependency graphs of named nodes: Kahn batches and cycle paths.
//!
//! Shared by the planner and the cycle rules, so that `plan` failing and `lint` reporting
//! CS001/CS002 can never disagree.

use std::collections::{BTreeMap, BTreeSet};

/// Nodes with their prerequisites: `deps[b]` contains `a` when `b` depends on `a`.
pub type Deps = BTreeMap<String, Vec<String>>;

/// Topological batches by Kahn's algorithm, each sorted by name; `Err` with the cycles when
/// some nodes can never be scheduled. Prerequisites that are not nodes are ignored (callers
/// remove them first).
pub fn kahn_batches(deps: &Deps) -> Result<Vec<Vec<String>>, Vec<Vec<String>>> {
    let mut in_degree: BTreeMap<&str, usize> = deps.keys().map(|k| (k.as_str(), 0)).collect();
    let mut dependents: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (node, prereqs) in deps {
        let unique: BTreeSet<&str> = prereqs
            .iter()
            .map(String::as_str)
            .filter(|p| deps.contains_key(*p))
            .collect();
        for p in unique {
            dependents.entry(p).or_default().insert(node.as_str());
            *in_degree.entry(node.as_str()).or_default() += 1;
        }
    }
    let mut batches = Vec::new();
    let mut ready: Vec<&str> = in_degree
        .iter()
        .filter(|(_, d)| **d == 0)
        .map(|(n, _)| *n)
        .collect();
    let mut done = 0;
    while !ready.is_empty() {
        ready.sort_unstable();
        done += ready.len();
        let mut next = Vec::new();
        for node in &ready {
            for dependent in dependents.get(node).into_iter().flatten() {
                let d = in_degree
                    .get_mut(dependent)
                    .expect("every dependent is a node");
                *d -= 1;
                if *d == 0 {
                    next.push(*dependent);
                }
            }
        }
        batches.push(ready.iter().map(|s| (*s).to_owned()).collect());
        ready = next;
    }
    if done == deps.len() {
        Ok(batches)
    } else {
        Err(find_cycles(deps))
    }
}

/// Every cycle as a path that starts and ends at its smallest node, in "depends on"
/// direction (`["db", "app", "db"]`: db depends on app, app depends on db). One path per
/// strongly connected component, found with Tarjan's algorithm (iterative).
#[must_use]
pub fn find_cycles(deps: &Deps) -> Vec<Vec<String>> {
    let names: Vec<&str> = deps.keys().map(String::as_str).collect();
    let index_of: BTreeMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let adj: Vec<Vec<usize>> = names
        .iter()
        .map(|n| {
            let mut out: Vec<usize> = deps[*n]
                .iter()
                .filter_map(|p| index_of.get(p.as_str()).copied())
                .collect();
            out.sort_unstable();
            out.dedup();
            out
        })
        .collect();

    let n = names.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut next_index = 0;
    let mut components: Vec<Vec<usize>> = Vec::new();
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut call: Vec<(usize, usize)> = vec![(start, 0)];
        index[start] = next_index;
        low[start] = next_index;
        next_index += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(&mut (v, ref mut edge)) = call.last_mut() {
            if let Some(&w) = adj[v].get(*edge) {
                *edge += 1;
                if index[w] == usize::MAX {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    call.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(parent, _)) = call.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut component = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        component.push(w);
                        if w == v {
                            break;
                        }
                    }
                    components.push(component);
                }
            }
        }
    }

    let mut cycles: Vec<Vec<String>> = components
        .into_iter()
        .filter(|c| c.len() > 1 || adj[c[0]].contains(&c[0]))
        .map(|component| {
            let members: BTreeSet<usize> = component.iter().copied().collect();
            let start = *members.iter().next().expect("non-empty component");
            shortest_cycle(start, &adj, &members)
                .into_iter()
                .map(|i| names[i].to_owned())
                .collect()
        })
        .collect();
    cycles.sort();
    cycles
}

/// Breadth-first search for the shortest way from `start` back to itself inside a component.
fn shortest_cycle(start: usize, adj: &[Vec<usize>], members: &BTreeSet<usize>) -> Vec<usize> {
    let mut previous: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in &adj[v] {
            if w == start {
                // Walk back from v to start, then read it forwards and close the loop.
                let mut path = vec![v];
                let mut cur = v;
                while cur != start {
                    cur = previous[&cur];
                    path.push(cur);
                }
                path.reverse();
                path.push(start);
                return path;
            }
            if members.contains(&w) && !previous.contains_key(&w) && w != start {
                previous.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    vec![start, start]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deps(pairs: &[(&str, &[&str])]) -> Deps {
        pairs
            .iter()
            .map(|(n, d)| ((*n).to_owned(), d.iter().map(|s| (*s).to_owned()).collect()))
            .collect()
    }

    #[test]
    fn batches_are_sorted_levels() {
        let d = deps(&[
            ("app", &["db", "queue"]),
            ("db", &[]),
            ("queue", &[]),
            ("web", &["app"]),
        ]);
        assert_eq!(
            kahn_batches(&d),
            Ok(vec![
                vec!["db".into(), "queue".into()],
                vec!["app".into()],
                vec!["web".into()]
            ])
        );
    }

    #[test]
    fn cycles_are_reported_as_paths() {
        let d = deps(&[("db", &["app"]), ("app", &["db"]), ("x", &[])]);
        assert_eq!(
            kahn_batches(&d),
            Err(vec![vec!["app".into(), "db".into(), "app".into()]])
        );
        let d = deps(&[("a", &["a"])]);
        assert_eq!(find_cycles(&d), vec![vec!["a".to_owned(), "a".to_owned()]]);
        let d = deps(&[("a", &["b"]), ("b", &["c"]), ("c", &["a"]), ("d", &["c"])]);
        assert_eq!(
            find_cycles(&d),
            vec![vec!["a".to_owned(), "b".into(), "c".into(), "a".into()]]
        );
    }

    #[test]
    fn deep_chains_do_not_recurse() {
        let mut d = Deps::new();
        for i in 0..100_000 {
            d.insert(
                format!("g{i:06}"),
                if i == 0 {
                    vec![]
                } else {
                    vec![format!("g{:06}", i - 1)]
                },
            );
        }
        d.get_mut("g000000").expect("exists").push("g099999".into());
        let cycles = find_cycles(&d);
        assert_eq!(cycles.len(), 1);
        assert_eq!(cycles[0].len(), 100_001);
    }
}
