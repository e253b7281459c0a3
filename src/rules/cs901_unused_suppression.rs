use crate::lint::{Context, Sink};

declare_rule! {
    /// ## What it does
    /// Reports a suppression that silenced nothing: a `chartseq.io/ignore` annotation on a
    /// resource, or a `# chartseq: ignore[...]` comment above a line, naming rules that found
    /// nothing there.
    ///
    /// ## Why is this bad?
    /// A stale suppression hides the next real finding at that place, and misleads readers
    /// about what is wrong.
    ///
    /// ## Example
    /// ```yaml
    /// # chartseq: ignore[CS305]
    /// kind: ConfigMap
    /// ```
    ///
    /// Use instead: remove the comment.
    pub static UNUSED_SUPPRESSION = ("CS901", "unused-suppression", Warning,
        "a suppression (annotation or comment) that silenced nothing", check);
}

/// Reported by the engine after the other rules ran (see `lint::suppress`).
fn check(_ctx: &Context, _sink: &mut Sink) {}
