use crate::lint::{Context, Diagnostic, Sink};
use crate::model::Content;

declare_rule! {
    /// ## What it does
    /// Reports a document of the rendered stream that is not valid YAML, or is valid YAML
    /// but not a Kubernetes object (no `apiVersion`, `kind` or `metadata.name`).
    ///
    /// ## Why is this bad?
    /// Helm cannot install such a document, and chartseq cannot tell which group it belongs
    /// to: it is planned with the unsequenced resources. The other documents are still checked.
    ///
    /// ## Example
    /// ```yaml
    /// metadata:
    ///   annotations:
    ///     helm.sh/resource-group: [db
    /// ```
    ///
    /// Use instead:
    /// ```yaml
    /// metadata:
    ///   annotations:
    ///     helm.sh/resource-group: db
    /// ```
    pub static INVALID_YAML = ("CS000", "invalid-yaml", Error,
        "a document does not parse (others are still checked)", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    for doc in &ctx.model.documents {
        let (message, at, help) = match &doc.content {
            Content::Invalid { message, at } => (
                format!("the document is not valid YAML: {message}"),
                *at,
                "fix the template so that it renders valid YAML (`helm template` shows the output)",
            ),
            // Argo CD creates a hook named only by `generateName` (under a name the server
            // makes): no error when the chart is deployed in its order.
            Content::NotAnObject {
                generated: Some(r), ..
            } if ctx.settings.argo_deploy && r.argo.is_hook => continue,
            Content::NotAnObject { message, at, .. } => (
                format!("the document cannot be installed: {}", lower_first(message)),
                *at,
                "every document needs `apiVersion`, `kind` and `metadata.name`",
            ),
            _ => continue,
        };
        sink.push(
            Diagnostic::new(&INVALID_YAML, doc.chart, at, message)
                .label("here")
                .help(help),
        );
    }
}

fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_lowercase().collect::<String>() + chars.as_str()
    })
}
