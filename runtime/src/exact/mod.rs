//! Parameter types serde reads exactly as their JSON Schema describes them. A tool whose
//! parameters all have such types, and whose schema says nothing more than they do, can read
//! its arguments straight from the text: whatever serde accepts, the schema accepts too (the
//! registry proves it for the schema the model sees; see `registry::proof`).

mod names;
mod probe;

use serde::de::DeserializeOwned;
use serde_json::Value;

pub(crate) use names::{ANNOTATIONS, accepted_names, is_annotation, referred};
pub use probe::{NameCache, ReadKnown, ReadNamed, ReadOptionalNamed, ReadUnknown, ShapeProbe};

/// What serde accepts for a parameter type, in JSON terms.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// An integer in `min..=max`, which schemars describes with `format`.
    Integer {
        /// The smallest accepted value.
        min: i128,
        /// The largest accepted value.
        max: i128,
        /// The `format` schemars gives the type.
        format: &'static str,
    },
    /// `true` or `false`.
    Boolean,
    /// A JSON string.
    String,
    /// A JSON array of the shape.
    Array(Box<Shape>),
    /// The shape or `null`; the property may also be left out.
    Optional(Box<Shape>),
    /// A JSON string among these names (the type's own schema lists them), read into the
    /// type by name: a unit enum. Read as a string, checked against the names, then turned
    /// into the type exactly as the checked path turns it.
    Named(Vec<String>),
}

impl Shape {
    /// How deeply values of this shape nest arrays (a scalar: 0).
    pub(crate) fn depth(&self) -> usize {
        match self {
            Shape::Array(items) => 1 + items.depth(),
            Shape::Optional(inner) => inner.depth(),
            _ => 0,
        }
    }
}

/// A type serde reads exactly as the JSON Schema schemars generates for it.
pub trait ExactShape {
    /// Its shape.
    fn shape() -> Shape;
}

macro_rules! integers {
    ($($ty:ty => $format:literal),* $(,)?) => {$(
        impl ExactShape for $ty {
            fn shape() -> Shape {
                Shape::Integer {
                    min: <$ty>::MIN as i128,
                    max: <$ty>::MAX as i128,
                    format: $format,
                }
            }
        }
    )*};
}

integers!(
    i8 => "int8", i16 => "int16", i32 => "int32", i64 => "int64",
    u8 => "uint8", u16 => "uint16", u32 => "uint32", u64 => "uint64",
);

// `f32` and `f64` are not exact: the checked path turns `-0.0` into the integer `0` (so that
// integer parameters accept it), and a float parameter then reads `0.0`. Read directly, it
// would be `-0.0`; the two paths must give the same values, so floats take the checked one.

impl ExactShape for bool {
    fn shape() -> Shape {
        Shape::Boolean
    }
}

impl ExactShape for String {
    fn shape() -> Shape {
        Shape::String
    }
}

impl<T: ExactShape> ExactShape for Vec<T> {
    fn shape() -> Shape {
        Shape::Array(Box::new(T::shape()))
    }
}

impl<T: ExactShape> ExactShape for Option<T> {
    fn shape() -> Shape {
        match T::shape() {
            // `Option<Option<T>>` reads `null` as the outer `None`: not a shape of its own.
            Shape::Optional(inner) => Shape::Optional(inner),
            inner => Shape::Optional(Box::new(inner)),
        }
    }
}

/// One parameter: its key in the arguments object, and its shape.
#[derive(Debug, Clone, PartialEq)]
pub struct ExactField {
    /// The JSON key.
    pub key: &'static str,
    /// What serde accepts for it.
    pub shape: Shape,
}

/// A `#[tool]`'s direct way in: its context (made on demand) and its arguments.
pub type ExactInvoke =
    fn(&mut dyn FnMut() -> crate::ToolContext, ExactInput<'_>) -> Option<crate::ToolFuture>;

/// A `#[tool]`'s way in for a call that runs in place: its context (made on demand), its
/// arguments, whether it may run (asked once the arguments are read), and the form its
/// result is wanted in.
pub type NowInvoke = fn(
    &mut dyn FnMut() -> crate::ToolContext,
    ExactInput<'_>,
    &mut dyn FnMut() -> bool,
    crate::output::ResultForm,
) -> Now;

/// What came of a [`NowInvoke`].
pub enum Now {
    /// The arguments could not be read (the checked path reads them and says why).
    Unread,
    /// Read, but not to be run now.
    NotRun,
    /// Run: what the function gave (in the form asked for), or the panic it stopped with.
    Ran(Result<Result<crate::output::Produced, crate::ToolError>, Box<dyn std::any::Any + Send>>),
}

/// Whether `text`'s first character after JSON's whitespace opens an object (whatever else
/// comes first is no JSON object).
#[inline]
fn opens_an_object(text: &str) -> bool {
    let mut bytes = text
        .bytes()
        .skip_while(|byte| matches!(byte, b' ' | b'\t' | b'\n' | b'\r'));
    bytes.next() == Some(b'{')
}

/// Arguments as they arrived, to be read straight into a tool's argument struct.
#[derive(Clone, Copy)]
pub enum ExactInput<'a> {
    /// JSON text.
    Text(&'a str),
    /// An already parsed value.
    Value(&'a Value),
}

impl ExactInput<'_> {
    /// The argument struct, or `None` where serde cannot read it (the registry then takes
    /// the checked path, which gives the error).
    ///
    /// Only an object is read: serde reads a struct from a JSON array too, its fields in
    /// order, where the schema the model saw accepts an object alone.
    pub fn read<T: DeserializeOwned>(self) -> Option<T> {
        match self {
            ExactInput::Text(text) if opens_an_object(text) => serde_json::from_str(text).ok(),
            ExactInput::Value(value @ Value::Object(_)) => T::deserialize(value).ok(),
            _ => None,
        }
    }
}
