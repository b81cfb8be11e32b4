//! A field that ought to be a JSON string, read in the same pass as the rest of the body:
//! the string (borrowed from the body where it holds no escapes), or word that it was some
//! other value (read past), so that the caller says what was wrong in its own words.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserialize, Deserializer, Error, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A JSON value that is a string, or is not.
#[derive(Debug, PartialEq)]
pub(crate) enum MaybeText<'a> {
    Text(Cow<'a, str>),
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for MaybeText<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(AnyValue(PhantomData))
    }
}

struct AnyValue<'a>(PhantomData<MaybeText<'a>>);

impl<'de: 'a, 'a> Visitor<'de> for AnyValue<'a> {
    type Value = MaybeText<'a>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: Error>(self, text: &'de str) -> Result<Self::Value, E> {
        Ok(MaybeText::Text(Cow::Borrowed(text)))
    }

    fn visit_str<E: Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(MaybeText::Text(Cow::Owned(text.to_owned())))
    }

    fn visit_string<E: Error>(self, text: String) -> Result<Self::Value, E> {
        Ok(MaybeText::Text(Cow::Owned(text)))
    }

    fn visit_bool<E: Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(MaybeText::Other)
    }

    fn visit_i64<E: Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(MaybeText::Other)
    }

    fn visit_u64<E: Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(MaybeText::Other)
    }

    fn visit_f64<E: Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(MaybeText::Other)
    }

    fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
        Ok(MaybeText::Other)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Self::Value, A::Error> {
        while items.next_element::<IgnoredAny>()?.is_some() {}
        Ok(MaybeText::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut entries: A) -> Result<Self::Value, A::Error> {
        while entries.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(MaybeText::Other)
    }
}

#[cfg(test)]
mod tests {
    use super::MaybeText;
    use std::borrow::Cow;

    fn read(json: &str) -> MaybeText<'_> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn strings_are_text_borrowed_unless_escaped_and_any_other_value_is_read_past() {
        assert_eq!(read(r#""add""#), MaybeText::Text(Cow::Borrowed("add")));
        let escaped = read(r#""a\u00e9\"""#);
        assert!(matches!(&escaped, MaybeText::Text(Cow::Owned(text)) if text == "aé\""));
        for other in [
            "3",
            "-1",
            "1.5",
            "true",
            "null",
            "[1, [2], {}]",
            r#"{"a": {"b": []}}"#,
        ] {
            assert_eq!(read(other), MaybeText::Other, "{other}");
        }
        // Read past without recursion (serde_json skips values with a loop of its own).
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(read(&deep), MaybeText::Other);
        assert!(serde_json::from_str::<MaybeText<'_>>("[1,").is_err());
    }
}
