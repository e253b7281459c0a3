//! Label and field selectors as kube-apiserver parses them (`k8s.io/apimachinery/pkg/labels`):
//! `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, `k>n`, `k<n`, joined by
//! commas; field selectors on `metadata.name` and `metadata.namespace` with `=`, `==`, `!=`.
//! Helm's storage lists with `owner=helm`, `name=<release>,owner=helm` and
//! `name=<release>,owner=helm,status=deployed`.

use std::collections::BTreeMap;

use serde_json::Value;

#[derive(Clone, Debug, PartialEq)]
enum Op {
    Equals(String),
    NotEquals(String),
    In(Vec<String>),
    NotIn(Vec<String>),
    Exists,
    DoesNotExist,
    Greater(i64),
    Less(i64),
}

#[derive(Clone, Debug, PartialEq)]
struct Requirement {
    key: String,
    op: Op,
}

impl Requirement {
    fn matches(&self, value: Option<&str>) -> bool {
        match (&self.op, value) {
            (Op::Equals(v), Some(have)) => have == v,
            (Op::NotEquals(v), have) => have != Some(v.as_str()),
            (Op::In(set), Some(have)) => set.iter().any(|v| v == have),
            (Op::NotIn(set), have) => have.is_none_or(|h| !set.iter().any(|v| v == h)),
            (Op::Exists, have) => have.is_some(),
            (Op::DoesNotExist, have) => have.is_none(),
            (Op::Greater(n), Some(have)) => have.parse::<i64>().is_ok_and(|h| h > *n),
            (Op::Less(n), Some(have)) => have.parse::<i64>().is_ok_and(|h| h < *n),
            (Op::Equals(_) | Op::In(_) | Op::Greater(_) | Op::Less(_), None) => false,
        }
    }
}

/// The selectors of a list or watch request.
#[derive(Clone, Debug, Default)]
pub(super) struct Selector {
    labels: Vec<Requirement>,
    fields: Vec<Requirement>,
}

/// Splits on commas outside parentheses.
fn terms(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect()
}

fn set(text: &str) -> Result<Vec<String>, String> {
    let inner = text
        .trim()
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .ok_or_else(|| format!("unable to parse requirement: found '{text}', expected: '('"))?;
    Ok(inner
        .split(',')
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .collect())
}

fn requirement(term: &str) -> Result<Requirement, String> {
    if let Some(key) = term.strip_prefix('!') {
        return Ok(Requirement {
            key: key.trim().to_owned(),
            op: Op::DoesNotExist,
        });
    }
    for (sep, make) in [
        (" notin ", Op::NotIn as fn(Vec<String>) -> Op),
        (" in ", Op::In as fn(Vec<String>) -> Op),
    ] {
        if let Some((key, values)) = term.split_once(sep) {
            return Ok(Requirement {
                key: key.trim().to_owned(),
                op: make(set(values)?),
            });
        }
    }
    let number = |v: &str| {
        v.trim()
            .parse::<i64>()
            .map_err(|_| format!("unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer: {v}"))
    };
    let (key, op) = if let Some((k, v)) = term.split_once("!=") {
        (k, Op::NotEquals(v.trim().to_owned()))
    } else if let Some((k, v)) = term.split_once("==") {
        (k, Op::Equals(v.trim().to_owned()))
    } else if let Some((k, v)) = term.split_once('=') {
        (k, Op::Equals(v.trim().to_owned()))
    } else if let Some((k, v)) = term.split_once('>') {
        (k, Op::Greater(number(v)?))
    } else if let Some((k, v)) = term.split_once('<') {
        (k, Op::Less(number(v)?))
    } else {
        (term, Op::Exists)
    };
    let key = key.trim();
    if key.is_empty() || key.contains(' ') {
        return Err(format!(
            "unable to parse requirement: invalid label key {key:?}"
        ));
    }
    Ok(Requirement {
        key: key.to_owned(),
        op,
    })
}

impl Selector {
    /// The `labelSelector` and `fieldSelector` of a query; a malformed one is an error, as
    /// the API server answers it (400).
    pub(super) fn from_query(q: &BTreeMap<String, String>) -> Result<Self, String> {
        let parse = |key: &str| -> Result<Vec<Requirement>, String> {
            q.get(key)
                .map(|text| terms(text).into_iter().map(requirement).collect())
                .transpose()
                .map(Option::unwrap_or_default)
        };
        let fields = parse("fieldSelector")?;
        for f in &fields {
            let supported = matches!(f.key.as_str(), "metadata.name" | "metadata.namespace")
                && matches!(f.op, Op::Equals(_) | Op::NotEquals(_));
            if !supported {
                return Err(format!(
                    "field label not supported: {} (this server selects on metadata.name and metadata.namespace)",
                    f.key
                ));
            }
        }
        Ok(Self {
            labels: parse("labelSelector")?,
            fields,
        })
    }

    pub(super) fn matches(&self, obj: &Value) -> bool {
        let meta = &obj["metadata"];
        self.fields
            .iter()
            .all(|f| f.matches(meta[&f.key["metadata.".len()..]].as_str()))
            && self
                .labels
                .iter()
                .all(|r| r.matches(meta["labels"][&r.key].as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::{BTreeMap, Selector};

    fn select(labels: &str) -> Selector {
        let q = BTreeMap::from([("labelSelector".to_owned(), labels.to_owned())]);
        Selector::from_query(&q).expect("parses")
    }

    #[test]
    fn label_selectors_match_as_kubernetes_does() {
        let obj = serde_json::json!({"metadata": {"name": "x", "labels": {"owner": "helm", "name": "shop", "version": "3"}}});
        for (sel, want) in [
            ("owner=helm,name=shop", true),
            ("owner==helm", true),
            ("owner=helm,status=deployed", false),
            ("status!=deployed", true),
            ("name in (shop, web)", true),
            ("name notin (shop)", false),
            ("status notin (deployed)", true),
            ("owner", true),
            ("!status", true),
            ("!owner", false),
            ("version>2,version<4", true),
        ] {
            assert_eq!(select(sel).matches(&obj), want, "{sel}");
        }
        let q = BTreeMap::from([("labelSelector".to_owned(), "a in b".to_owned())]);
        assert!(Selector::from_query(&q).is_err());
    }
}
