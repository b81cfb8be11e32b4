//! How `#[tool]` code reads each parameter type directly, picked by autoref: the first of
//! these that applies to the type, from the most specific.
//!
//! 1. [`ReadKnown`]: a type with a known shape ([`ExactShape`]), read as it is.
//! 2. [`ReadOptionalNamed`]: `Option<T>` of a type whose schema lists names (a unit enum).
//! 3. [`ReadNamed`]: a type whose schema lists names.
//! 4. [`ReadUnknown`]: anything else; such a tool is never read directly.
//!
//! Generated code calls `(&&&&ShapeProbe::<T>::new()).shape()` and `.read(..)`.

use std::marker::PhantomData;
use std::sync::OnceLock;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use std::fmt;

use serde::Deserializer;
use serde::de::value::BorrowedStrDeserializer;
use serde::de::{DeserializeOwned, Error as _, Visitor};
use serde_json::Value;

use super::{ExactShape, Shape, accepted_names};

/// Picks how a parameter type is read directly.
pub struct ShapeProbe<T: ?Sized>(PhantomData<T>);

impl<T: ?Sized> ShapeProbe<T> {
    /// A new probe.
    pub fn new() -> Self {
        ShapeProbe(PhantomData)
    }
}

impl<T: ?Sized> Default for ShapeProbe<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// The names a parameter's type lists, found once per parameter (a `static` in the code
/// `#[tool]` generates).
pub type NameCache = OnceLock<Option<Vec<String>>>;

/// One level of the probe: a trait of its own (autoref tries each in turn), all alike.
macro_rules! level {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        pub trait $name {
            /// The parameter's type.
            type Value;
            /// Its shape, or `None` where it is not read directly.
            fn shape(&self) -> Option<Shape>;
            /// Reads it directly (`names`: the names a unit enum lists, found once).
            fn read<'de, D: Deserializer<'de>>(
                &self,
                from: D,
                names: &'static NameCache,
            ) -> Result<Self::Value, D::Error>;
        }
    };
}

level!(
    /// 1. A type with a known shape.
    ReadKnown
);

impl<T: ExactShape + DeserializeOwned> ReadKnown for &&&ShapeProbe<T> {
    type Value = T;

    fn shape(&self) -> Option<Shape> {
        Some(T::shape())
    }

    fn read<'de, D: Deserializer<'de>>(
        &self,
        from: D,
        _names: &'static NameCache,
    ) -> Result<T, D::Error> {
        T::deserialize(from)
    }
}

level!(
    /// 2. `Option` of a type whose schema lists names.
    ReadOptionalNamed
);

impl<T: JsonSchema + DeserializeOwned> ReadOptionalNamed for &&ShapeProbe<Option<T>> {
    type Value = Option<T>;

    fn shape(&self) -> Option<Shape> {
        Some(Shape::Optional(Box::new(Shape::Named(names_of::<T>()?))))
    }

    fn read<'de, D: Deserializer<'de>>(
        &self,
        from: D,
        names: &'static NameCache,
    ) -> Result<Option<T>, D::Error> {
        let names = names.get_or_init(names_of::<T>);
        match from.deserialize_option(OptionalName(names))? {
            None => Ok(None),
            Some(name) => by_name(name).map(Some),
        }
    }
}

level!(
    /// 3. A type whose schema lists names.
    ReadNamed
);

impl<T: JsonSchema + DeserializeOwned> ReadNamed for &ShapeProbe<T> {
    type Value = T;

    fn shape(&self) -> Option<Shape> {
        Some(Shape::Named(names_of::<T>()?))
    }

    fn read<'de, D: Deserializer<'de>>(
        &self,
        from: D,
        names: &'static NameCache,
    ) -> Result<T, D::Error> {
        let names = names.get_or_init(names_of::<T>);
        by_name(from.deserialize_str(Name(names))?)
    }
}

level!(
    /// 4. Anything else.
    ReadUnknown
);

impl<T> ReadUnknown for ShapeProbe<T> {
    type Value = T;

    fn shape(&self) -> Option<Shape> {
        None
    }

    fn read<'de, D: Deserializer<'de>>(
        &self,
        _from: D,
        _names: &'static NameCache,
    ) -> Result<T, D::Error> {
        Err(D::Error::custom("this parameter is not read directly"))
    }
}

/// `name`, one of the names `T`'s schema lists, read into `T` exactly as the checked path
/// reads a string that passed the schema (from a `&Value`, whose string it borrows).
fn by_name<T: DeserializeOwned, E: serde::de::Error>(name: &'static str) -> Result<T, E> {
    T::deserialize(BorrowedStrDeserializer::<E>::new(name))
}

/// Reads a string that is one of `names` (the list's own, so that nothing is copied); any
/// other (a `serde` alias or `#[serde(other)]` the schema does not list) is refused, and the
/// call then takes the checked path, which gives the error.
struct Name(&'static Option<Vec<String>>);

impl<'de> Visitor<'de> for Name {
    type Value = &'static str;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("one of the names the schema lists")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<&'static str, E> {
        let names = self.0.as_deref().unwrap_or_default();
        let found = names.iter().find(|name| *name == text);
        found
            .map(String::as_str)
            .ok_or_else(|| E::custom("not one of the names the schema lists"))
    }
}

/// [`Name`], or `null`.
struct OptionalName(&'static Option<Vec<String>>);

impl<'de> Visitor<'de> for OptionalName {
    type Value = Option<&'static str>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("null, or one of the names the schema lists")
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, from: D) -> Result<Self::Value, D::Error> {
        from.deserialize_str(Name(self.0)).map(Some)
    }
}

/// The names `T`'s own schema lists, if it accepts a list of strings and nothing else.
fn names_of<T: JsonSchema>() -> Option<Vec<String>> {
    let generator = SchemaSettings::draft2020_12().into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    let map = schema.as_object_mut()?;
    // The dialect's URI says nothing of the values.
    map.remove("$schema");
    let defs = map.remove("$defs");
    accepted_names(&schema, defs.as_ref().and_then(Value::as_object))
}
