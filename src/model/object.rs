//! One object as every sequencing system's reader sees it, and the one shape of those readers:
//! `load` builds an [`Object`] once per object and each system reads its part of the
//! [`super::Resource`] from it ([`ReadObject`]). A system's own `read` keeps the narrower
//! arguments it needs, which its unit tests call directly.

use super::annotations::Annotation;
use super::argo::Argo;
use super::draft::Draft;
use super::kapp::{self, Kapp};
use super::kots::Kots;
use super::werf::{FirstStage, Werf};
use super::werf_auto;
use crate::parse::Node;
use crate::source::FileId;

/// One object of the rendered stream, read so far as every system needs it.
pub struct Object<'a> {
    /// Its annotations, read once, with their locations.
    pub annotations: &'a [Annotation],
    /// Its API group (`""` for the core group).
    pub api_group: &'a str,
    pub kind: &'a str,
    /// The namespace written in it.
    pub namespace: Option<&'a str>,
    /// The whole object.
    pub node: &'a Node,
    /// The file it was read from.
    pub file: FileId,
    /// The document's text and the byte offset it starts at in `file`.
    pub text: (&'a str, u32),
}

impl Object<'_> {
    /// Whether it is a `CustomResourceDefinition`.
    #[must_use]
    pub fn is_crd(&self) -> bool {
        self.kind == "CustomResourceDefinition" && self.api_group == "apiextensions.k8s.io"
    }

    /// Whether it is a `Namespace`.
    #[must_use]
    pub fn is_namespace(&self) -> bool {
        self.kind == "Namespace" && self.api_group.is_empty()
    }
}

/// A system's reading of one object.
pub trait ReadObject {
    fn read_object(object: &Object<'_>) -> Self;
}

impl ReadObject for Argo {
    fn read_object(object: &Object<'_>) -> Self {
        Argo::read(object.annotations)
    }
}

impl ReadObject for Werf {
    fn read_object(object: &Object<'_>) -> Self {
        let first = if object.is_crd() {
            FirstStage::Crd
        } else if object.is_namespace() {
            FirstStage::Namespace
        } else {
            FirstStage::No
        };
        let mut werf = Werf::read(object.annotations, first);
        werf.auto = werf_auto::read(
            object.api_group,
            object.kind,
            object.namespace,
            object.node,
            object.file,
        );
        werf.read_tracking(
            object.annotations,
            object.api_group,
            object.kind,
            object.node,
        );
        werf.read_deletion(object.annotations);
        werf
    }
}

/// What kapp reads of an object on its own: a CRD's group, kind and scope. The rest needs the
/// whole release (`kapp::settle`, `load`'s release-wide pass).
impl ReadObject for Kapp {
    fn read_object(object: &Object<'_>) -> Self {
        Kapp {
            crd: kapp::read_crd(object.api_group, object.kind, object.node),
            ..Kapp::default()
        }
    }
}

impl ReadObject for Kots {
    fn read_object(object: &Object<'_>) -> Self {
        Kots::read(object.annotations, Some(object.text))
    }
}

impl ReadObject for Draft {
    fn read_object(object: &Object<'_>) -> Self {
        Draft::read(object.annotations)
    }
}
