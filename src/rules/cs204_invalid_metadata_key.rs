use crate::lint::{Context, Diagnostic, Sink};
use crate::model::annotations::{
    AnnotationValue, DEPENDS_ON_GROUPS, READINESS_FAILURE, READINESS_SUCCESS,
};
use crate::model::qualified::{label_value_problem, qualified_name_problem};

declare_rule! {
    /// ## What it does
    /// Reports an annotation key, label key or label value that the Kubernetes API server
    /// refuses: a key is an optional DNS-1123 prefix and a name of at most 63 letters, digits,
    /// `-`, `_` and `.` (beginning and ending with a letter or digit) separated by one `/`;
    /// label values follow the name's rule. Annotation keys are judged in lowercase, as the
    /// API server judges them. `helm.sh/depends-on/resource-groups` is the one exception: Helm
    /// removes it before applying. An annotation value that is an unquoted number or boolean,
    /// a list or a mapping is refused too (the API server decodes only strings there; an empty
    /// value is taken as `""`); the sequencing keys' own values are CS201's.
    ///
    /// ## Why is this bad?
    /// The API server refuses the whole object. Sequenced, the install stops halfway: the
    /// groups before it are applied, the rest never are, and `helm install` fails the same way.
    /// A misspelt sequencing key (`helm.sh/depends-on/resource-group`, singular) is such a key.
    ///
    /// ## Example
    /// ```yaml
    /// metadata:
    ///   annotations:
    ///     helm.sh/depends-on/resource-group: '["db"]'
    ///     example.com/replicas: 3
    ///   labels:
    ///     tier: "front end"
    /// ```
    ///
    /// Use instead:
    /// ```yaml
    /// metadata:
    ///   annotations:
    ///     helm.sh/depends-on/resource-groups: '["db"]'
    ///     example.com/replicas: "3"
    ///   labels:
    ///     tier: front-end
    /// ```
    pub static INVALID_METADATA_KEY = ("CS204", "invalid-metadata-key", Error,
        "an annotation or label key, or a label or annotation value, that the Kubernetes API server refuses", check);
}

/// The most the API server takes of one object's annotations, keys and values together.
const ANNOTATIONS_MAX: usize = 256 * 1024;

fn check(ctx: &Context, sink: &mut Sink) {
    for (doc, r) in ctx.resources() {
        let chart = ctx.model.documents[doc].chart;
        let mut total = 0;
        for a in &r.annotations {
            total += a.key.len() + a.value.as_str().map_or(0, str::len);
            if a.key == DEPENDS_ON_GROUPS {
                continue;
            }
            if let Some(what) = refused_value(&a.value) {
                if ![READINESS_SUCCESS, READINESS_FAILURE].contains(&a.key.as_str()) {
                    sink.push(
                        Diagnostic::new(
                            &INVALID_METADATA_KEY,
                            chart,
                            a.value_loc,
                            format!(
                                "the value of annotation `{}` is {what}, not a string: the Kubernetes API server refuses the object",
                                a.key
                            ),
                        )
                        .doc(doc)
                        .label("not a string")
                        .help("quote the value (in a template: `{{ ... | quote }}`)"),
                    );
                }
            }
            if let Some(why) = qualified_name_problem(&a.key.to_ascii_lowercase()) {
                sink.push(
                    Diagnostic::new(
                        &INVALID_METADATA_KEY,
                        chart,
                        a.key_loc,
                        format!(
                            "annotation key `{}` is refused by the Kubernetes API server: {why}",
                            a.key
                        ),
                    )
                    .doc(doc)
                    .label("the API server refuses the object with this key")
                    .help(help(&a.key)),
                );
            }
        }
        if total > ANNOTATIONS_MAX {
            if let Some(first) = r.annotations.first() {
                sink.push(
                    Diagnostic::new(
                        &INVALID_METADATA_KEY,
                        chart,
                        first.key_loc,
                        format!(
                            "the annotations of {} hold {total} bytes, over the API server's limit of {ANNOTATIONS_MAX}",
                            r.id
                        ),
                    )
                    .doc(doc)
                    .label("the annotations start here")
                    .help("move large data into a ConfigMap or Secret"),
                );
            }
        }
        for l in &r.labels {
            if let Some(why) = qualified_name_problem(&l.key) {
                sink.push(
                    Diagnostic::new(
                        &INVALID_METADATA_KEY,
                        chart,
                        l.key_loc,
                        format!(
                            "label key `{}` is refused by the Kubernetes API server: {why}",
                            l.key
                        ),
                    )
                    .doc(doc)
                    .label("the API server refuses the object with this key")
                    .help(help(&l.key)),
                );
            }
            let Some(value) = l.value.as_str() else {
                continue;
            };
            if let Some(why) = label_value_problem(value) {
                sink.push(
                    Diagnostic::new(
                        &INVALID_METADATA_KEY,
                        chart,
                        l.value_loc,
                        format!(
                            "the value of label `{}` is refused by the Kubernetes API server: {why}",
                            l.key
                        ),
                    )
                    .doc(doc)
                    .label("the API server refuses the object with this value")
                    .help("use a value of at most 63 letters, digits, `-`, `_` and `.`, or move it to an annotation"),
                );
            }
        }
    }
}

/// What an annotation value the API server refuses is (an empty value decodes as `""`).
fn refused_value(value: &AnnotationValue) -> Option<&'static str> {
    match value {
        AnnotationValue::Str(_) => None,
        AnnotationValue::Coerced { text, what } => (!text.is_empty()).then_some(*what),
        AnnotationValue::NotString { what, .. } => Some(what),
    }
}

fn help(key: &str) -> String {
    if key.starts_with("helm.sh/depends-on/") {
        format!(
            "did you mean `{DEPENDS_ON_GROUPS}`? (Helm removes that key, and only that one, before applying)"
        )
    } else {
        "fix the key; the install stops at this object otherwise".to_owned()
    }
}
