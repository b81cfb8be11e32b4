//! A tool's result written straight to JSON text, where that text is provably the text of
//! its `serde_json::Value`: what a caller that only writes the result out (an HTTP answer)
//! would otherwise get by building the value, writing it and dropping it.
//!
//! A value writes an object's keys sorted, each once; the writer below writes each object's
//! entries as they come, and sorts them in place when the object closes (a key given twice
//! makes it give up: a value would keep the last). Where the build's serde_json keeps an
//! object's keys in the order they came instead (its `preserve_order` feature, which any
//! crate of the program may turn on: `cedar-policy` does), results are given their keys
//! sorted all the same ([`sorted`](super::sorted)), so this text is still their text. It gives up, too, where a value holds a
//! number otherwise (an `f32` is widened to `f64`, an `i128` beyond 64 bits refused), where
//! raw JSON would be parsed, and where a key is escaped (compared unescaped) or not a string
//! or an integer. What it writes is thus either the value's very text, or nothing: the
//! caller then takes the value's path.

use std::io;

use serde::Serialize;
use serde_json::ser::{CharEscape, CompactFormatter, Formatter, Serializer};
use smallvec::SmallVec;

/// The JSON text of `serde_json::to_value(output)`, written without the value; `None` where
/// the text written directly could differ from it (see the module's documentation), or
/// where serialization fails (the value's path then gives its error).
pub(crate) fn value_text<T: Serialize + ?Sized>(output: &T) -> Option<Vec<u8>> {
    let mut untouched = Untouched(true);
    let mut writes = AsValueWrites {
        // Room for a small result (and its entries sorted): growing from nothing would
        // reallocate several times.
        out: Vec::with_capacity(256),
        ..AsValueWrites::default()
    };
    output
        .serialize(&mut Serializer::with_formatter(&mut untouched, &mut writes))
        .ok()?;
    // serde_json writes through its formatter only; were that to change, give up.
    if !untouched.0 {
        return None;
    }
    // UTF-8: serde_json writes `str`s and ASCII, and entries are moved whole.
    Some(writes.out)
}

/// The writer serde_json is given: the formatter writes into its own buffer, where it can
/// reorder what it wrote.
struct Untouched(bool);

impl io::Write for Untouched {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0 &= bytes.is_empty();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// How deeply objects may nest before the writer gives up.
const DEPTH: usize = 16;

/// How deeply arrays and objects may nest: the text must read back (serde_json reads 128
/// levels), for those who want the value after all.
const NESTING: usize = 64;

/// An open object: where its `{` is, where its entries start in the list of entries, and
/// whether they have come out of order so far.
#[derive(Clone, Copy, Default)]
struct Open {
    brace: usize,
    first_entry: usize,
    unsorted: bool,
}

/// One entry of an open object, by its place in the text: `"key":value`.
#[derive(Clone, Copy)]
struct Entry {
    start: usize,
    key_end: usize,
    end: usize,
}

/// serde_json's compact writing into a buffer of its own, each object's entries sorted by
/// key when it closes, and a stop wherever a value would write something else.
#[derive(Default)]
struct AsValueWrites {
    out: Vec<u8>,
    /// The entries of the open objects, each object's after its parent's.
    entries: SmallVec<[Entry; 8]>,
    open: [Open; DEPTH],
    /// How many objects are open.
    depth: usize,
    /// How many arrays and objects are open.
    nesting: usize,
    /// Whether a key is being written.
    in_key: bool,
}

/// Why the writer stopped: the text could differ from the value's.
fn differs(why: &'static str) -> io::Error {
    io::Error::other(why)
}

impl AsValueWrites {
    /// A key is text or an integer, written alike by a value: anything else is written by
    /// a value in its own way.
    fn not_in_key(&self) -> io::Result<()> {
        match self.in_key {
            true => Err(differs("a key that is neither a string nor an integer")),
            false => Ok(()),
        }
    }

    /// An array or object opens: not as a key, and not too deep.
    fn nest(&mut self) -> io::Result<()> {
        self.not_in_key()?;
        if self.nesting == NESTING {
            return Err(differs("arrays and objects nested too deeply"));
        }
        self.nesting += 1;
        Ok(())
    }

    /// The key of `entry`, between its quotes.
    fn key(&self, entry: &Entry) -> &[u8] {
        &self.out[entry.start + 1..entry.key_end - 1]
    }

    /// Puts the entries of the object opened at `open`, out of order, in the order of
    /// their keys, as a value's map holds them; a key given twice stops the writer (a value
    /// keeps one). The sorted entries are written after the text, then moved over the
    /// object's: no buffer of their own.
    fn sort_entries(&mut self, open: Open) -> io::Result<()> {
        let mut order: SmallVec<[Entry; 8]> =
            self.entries[open.first_entry..].iter().copied().collect();
        order.sort_unstable_by(|a, b| self.key(a).cmp(self.key(b)));
        if order
            .windows(2)
            .any(|pair| self.key(&pair[0]) == self.key(&pair[1]))
        {
            return Err(differs("a key given twice"));
        }
        let (base, end) = (open.brace + 1, self.out.len());
        for (index, entry) in order.iter().enumerate() {
            if index > 0 {
                self.out.push(b',');
            }
            self.out.extend_from_within(entry.start..entry.end);
        }
        self.out.copy_within(end.., base);
        self.out.truncate(end);
        Ok(())
    }
}

/// Writes a scalar as the compact formatter does, once it is known not to be a key.
macro_rules! scalars {
    ($($method:ident($ty:ty)),* $(,)?) => {$(
        fn $method<W: ?Sized + io::Write>(&mut self, _: &mut W, value: $ty) -> io::Result<()> {
            self.not_in_key()?;
            CompactFormatter.$method(&mut self.out, value)
        }
    )*};
}

/// Writes an integer as the compact formatter does, as a value or as a key (a value's key
/// is the integer's digits, as written here).
macro_rules! integers {
    ($($method:ident($ty:ty)),* $(,)?) => {$(
        fn $method<W: ?Sized + io::Write>(&mut self, _: &mut W, value: $ty) -> io::Result<()> {
            CompactFormatter.$method(&mut self.out, value)
        }
    )*};
}

/// Writes punctuation as the compact formatter does.
macro_rules! marks {
    ($($method:ident),* $(,)?) => {$(
        fn $method<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
            CompactFormatter.$method(&mut self.out)
        }
    )*};
}

impl Formatter for &mut AsValueWrites {
    scalars!(write_bool(bool), write_f64(f64), write_byte_array(&[u8]));
    integers!(
        write_i8(i8),
        write_i16(i16),
        write_i32(i32),
        write_i64(i64),
        write_u8(u8),
        write_u16(u16),
        write_u32(u32),
        write_u64(u64),
    );
    marks!(begin_string, end_string, begin_object_value);

    fn write_null<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.not_in_key()?;
        CompactFormatter.write_null(&mut self.out)
    }

    // A value holds an `i128` only where 64 bits hold it (and refuses it otherwise); as a
    // key, it is its digits either way.
    fn write_i128<W: ?Sized + io::Write>(&mut self, _: &mut W, value: i128) -> io::Result<()> {
        let held = u64::try_from(value).is_ok() || i64::try_from(value).is_ok();
        if !(held || self.in_key) {
            return Err(differs("an integer beyond 64 bits"));
        }
        CompactFormatter.write_i128(&mut self.out, value)
    }

    fn write_u128<W: ?Sized + io::Write>(&mut self, _: &mut W, value: u128) -> io::Result<()> {
        if !(u64::try_from(value).is_ok() || self.in_key) {
            return Err(differs("an integer beyond 64 bits"));
        }
        CompactFormatter.write_u128(&mut self.out, value)
    }

    // A value widens an `f32` to `f64`, whose shortest text is another one.
    fn write_f32<W: ?Sized + io::Write>(&mut self, _: &mut W, _: f32) -> io::Result<()> {
        Err(differs("an f32"))
    }

    fn write_number_str<W: ?Sized + io::Write>(&mut self, _: &mut W, _: &str) -> io::Result<()> {
        Err(differs("a number kept as text"))
    }

    fn write_raw_fragment<W: ?Sized + io::Write>(&mut self, _: &mut W, _: &str) -> io::Result<()> {
        Err(differs("raw JSON, which a value would parse and reorder"))
    }

    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        _: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        CompactFormatter.write_string_fragment(&mut self.out, fragment)
    }

    // An escaped key would have to be compared unescaped; it is rare.
    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        _: &mut W,
        char_escape: CharEscape,
    ) -> io::Result<()> {
        if self.in_key {
            return Err(differs("a key with an escaped character"));
        }
        CompactFormatter.write_char_escape(&mut self.out, char_escape)
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.nest()?;
        CompactFormatter.begin_array(&mut self.out)
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.nesting -= 1;
        CompactFormatter.end_array(&mut self.out)
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        _: &mut W,
        first: bool,
    ) -> io::Result<()> {
        CompactFormatter.begin_array_value(&mut self.out, first)
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.nest()?;
        let open = Open {
            brace: self.out.len(),
            first_entry: self.entries.len(),
            unsorted: false,
        };
        let Some(slot) = self.open.get_mut(self.depth) else {
            return Err(differs("objects nested deeper than the writer follows"));
        };
        *slot = open;
        self.depth += 1;
        CompactFormatter.begin_object(&mut self.out)
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.nesting -= 1;
        self.depth -= 1;
        let open = self.open[self.depth];
        if open.unsorted {
            self.sort_entries(open)?;
        }
        self.entries.truncate(open.first_entry);
        CompactFormatter.end_object(&mut self.out)
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        _: &mut W,
        first: bool,
    ) -> io::Result<()> {
        CompactFormatter.begin_object_key(&mut self.out, first)?;
        self.entries.push(Entry {
            start: self.out.len(),
            key_end: 0,
            end: 0,
        });
        self.in_key = true;
        Ok(())
    }

    // Whether the object's keys have come in order so far is noted as each comes (a key
    // equal to the last is out of order too: it is sorted out, and found given twice).
    fn end_object_key<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.in_key = false;
        let key_end = self.out.len();
        let open = &mut self.open[self.depth - 1];
        let Some((entry, earlier)) = self.entries[open.first_entry..].split_last_mut() else {
            return Ok(());
        };
        entry.key_end = key_end;
        if let Some(last) = earlier.last() {
            let key = |entry: &Entry| &self.out[entry.start + 1..entry.key_end - 1];
            open.unsorted |= key(last) >= key(entry);
        }
        Ok(())
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        let end = self.out.len();
        if let Some(entry) = self.entries.last_mut() {
            entry.end = end;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet, HashMap};

    use proptest::prelude::*;
    use serde::ser::{SerializeMap, SerializeSeq};
    use serde_json::json;

    use super::*;

    /// What serde_json's value path writes for `output`, if anything.
    /// The text of `output`'s value as a result is given: sorted in every build.
    fn value_path<T: Serialize>(output: &T) -> Option<String> {
        let value = crate::output::sorted(serde_json::to_value(output).ok()?);
        Some(serde_json::to_string(&value).unwrap())
    }

    /// `output` written directly is its value's text.
    fn same_text<T: Serialize>(output: &T) -> String {
        let text = String::from_utf8(value_text(output).expect("written directly")).unwrap();
        assert_eq!(Some(&text), value_path(output).as_ref());
        text
    }

    #[derive(Serialize)]
    struct Sorted {
        count: u32,
        hours: Vec<(u8, u8)>,
        name: &'static str,
        note: Option<String>,
        when: Kind,
    }

    #[derive(Serialize)]
    enum Kind {
        Weekday { from: u8, to: u8 },
    }

    #[test]
    fn a_result_whose_keys_come_sorted_is_written_as_its_value_is() {
        let sorted = Sorted {
            count: 3,
            hours: vec![(9, 17)],
            name: "a \"quoted\"\n name é",
            note: None,
            when: Kind::Weekday { from: 1, to: 5 },
        };
        assert_eq!(
            same_text(&sorted),
            r#"{"count":3,"hours":[[9,17]],"name":"a \"quoted\"\n name é","note":null,"when":{"Weekday":{"from":1,"to":5}}}"#
        );
        same_text(&json!({"b": [1, {"z": 1, "a": -0.0}], "a": 1e300}));
        same_text(&BTreeMap::from([("a", 1), ("b", 2)]));
        same_text(&vec![1.5f64, f64::NAN, -0.0]);
        same_text(&(i128::from(i64::MIN), u128::from(u64::MAX), "text", ()));
        same_text(&HashMap::from([("only", 1)]));
        same_text(&serde_bytes_like());
        same_text(&BTreeMap::from([("", 1), ("a", 2)]));
        same_text(&json!({}));
    }

    /// Bytes, written as a list of numbers either way.
    fn serde_bytes_like() -> impl Serialize {
        struct Bytes;
        impl Serialize for Bytes {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_bytes(b"\x00\xff")
            }
        }
        Bytes
    }

    #[derive(Serialize, Clone)]
    struct Unsorted {
        name: &'static str,
        count: u32,
    }

    #[derive(Serialize)]
    struct Flattened {
        name: &'static str,
        #[serde(flatten)]
        extra: BTreeMap<&'static str, u32>,
    }

    #[test]
    fn entries_are_sorted_as_a_value_sorts_them() {
        let unsorted = Unsorted {
            name: "a",
            count: 1,
        };
        assert_eq!(same_text(&unsorted), r#"{"count":1,"name":"a"}"#);
        let nested = json!([{"z": {"y": 1, "x": [2, {"b": 1, "a": 2}]}, "a": null}]);
        same_text(&vec![
            Unsorted {
                name: "é",
                count: 2
            };
            3
        ]);
        same_text(&nested);
        // Integer keys are their digits, as a value's are, and sorted as text.
        assert_eq!(
            same_text(&BTreeMap::from([(9, "a"), (10, "b"), (-1, "c")])),
            r#"{"-1":"c","10":"b","9":"a"}"#
        );
        same_text(&BTreeMap::from([(u128::MAX, 1), (0, 2)]));
        same_text(&HashMap::from([("x", 1), ("y", 2), ("z", 3), ("w", 4)]));
    }

    #[test]
    fn a_result_a_value_would_write_otherwise_is_not_written() {
        // A key given twice, which a value merges.
        let twice = Flattened {
            name: "a",
            extra: BTreeMap::from([("name", 1)]),
        };
        assert_eq!(value_text(&twice), None);
        assert_eq!(value_path(&twice).unwrap(), r#"{"name":1}"#);
        // Numbers a value holds otherwise: widened, or refused.
        assert_eq!(value_text(&0.1f32), None);
        assert_eq!(value_text(&(i128::from(u64::MAX) + 1)), None);
        assert_eq!(value_text(&(i128::from(i64::MIN) - 1)), None);
        assert_eq!(value_text(&(u128::from(u64::MAX) + 1)), None);
        // Raw JSON, which a value parses and sorts.
        let raw = serde_json::value::RawValue::from_string(r#"{"b":1, "a":2}"#.into()).unwrap();
        assert_eq!(value_text(&raw), None);
        // Keys that are neither strings nor integers, or escaped.
        assert_eq!(value_text(&BTreeMap::from([(true, "a")])), None);
        assert_eq!(value_text(&BTreeMap::from([('\n', "a")])), None);
        assert_eq!(value_text(&BTreeMap::from([("\"quoted\"", 1)])), None);
        // What cannot be JSON at all: the value's path says why.
        assert_eq!(value_text(&HashMap::from([((1, 2), "a")])), None);
    }

    #[test]
    fn objects_or_lists_nested_past_the_limits_are_left_to_the_value() {
        let mut objects = json!(1);
        for _ in 0..DEPTH {
            objects = json!({ "a": objects });
        }
        assert!(value_text(&objects).is_some());
        assert_eq!(value_text(&json!({ "a": objects })), None);

        let mut lists = json!(1);
        for _ in 0..NESTING {
            lists = json!([lists]);
        }
        assert!(value_text(&lists).is_some());
        assert_eq!(value_text(&json!([lists])), None);
        // A text written reads back into its value.
        let written = value_text(&lists).unwrap();
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&written).unwrap(),
            lists
        );
    }

    /// A result of any shape: objects with their keys in any order, given twice or not,
    /// and numbers of every kind.
    #[derive(Debug, Clone)]
    enum Node {
        Null,
        Bool(bool),
        Int(i64),
        Big(i128),
        Float(f64),
        Narrow(f32),
        Text(String),
        List(Vec<Node>),
        Object(Vec<(String, Node)>),
    }

    impl Serialize for Node {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            match self {
                Node::Null => serializer.serialize_unit(),
                Node::Bool(value) => serializer.serialize_bool(*value),
                Node::Int(value) => serializer.serialize_i64(*value),
                Node::Big(value) => serializer.serialize_i128(*value),
                Node::Float(value) => serializer.serialize_f64(*value),
                Node::Narrow(value) => serializer.serialize_f32(*value),
                Node::Text(value) => serializer.serialize_str(value),
                Node::List(items) => {
                    let mut seq = serializer.serialize_seq(Some(items.len()))?;
                    items
                        .iter()
                        .try_for_each(|item| seq.serialize_element(item))?;
                    seq.end()
                }
                Node::Object(entries) => {
                    let mut map = serializer.serialize_map(Some(entries.len()))?;
                    for (key, value) in entries {
                        map.serialize_entry(key, value)?;
                    }
                    map.end()
                }
            }
        }
    }

    impl Node {
        /// Whether the writer must write it: keys each once and unescaped, and numbers a
        /// value holds as they are.
        fn plain(&self) -> bool {
            match self {
                Node::Narrow(_) => false,
                Node::Big(value) => i64::try_from(*value).is_ok() || u64::try_from(*value).is_ok(),
                Node::List(items) => items.iter().all(Node::plain),
                Node::Object(entries) => {
                    let keys: BTreeSet<&String> = entries.iter().map(|(key, _)| key).collect();
                    let unescaped =
                        |key: &String| !key.chars().any(|c| c < ' ' || c == '"' || c == '\\');
                    keys.len() == entries.len()
                        && entries
                            .iter()
                            .all(|(key, value)| unescaped(key) && value.plain())
                }
                _ => true,
            }
        }
    }

    fn any_node() -> impl Strategy<Value = Node> {
        let leaf = prop_oneof![
            Just(Node::Null),
            any::<bool>().prop_map(Node::Bool),
            any::<i64>().prop_map(Node::Int),
            any::<i128>().prop_map(|n| Node::Big(n >> (n as u8 % 128))),
            any::<f64>().prop_map(Node::Float),
            any::<f32>().prop_map(Node::Narrow),
            "[a-c\"\\\\\n é]{0,4}".prop_map(Node::Text),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Node::List),
                prop::collection::vec(("[a-c\"\n]{0,2}", inner.clone()), 0..6)
                    .prop_map(Node::Object),
                // Objects whose keys come each once, as most results' do.
                prop::collection::btree_map("[a-z]{0,3}", inner, 0..6).prop_flat_map(|entries| {
                    let entries: Vec<_> = entries.into_iter().collect();
                    Just(entries).prop_shuffle().prop_map(Node::Object)
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        #[test]
        fn what_is_written_is_the_values_text_and_plain_results_are_written(node in any_node()) {
            let written = value_text(&node).map(|text| String::from_utf8(text).unwrap());
            if let Some(text) = &written {
                prop_assert_eq!(Some(text.clone()), value_path(&node));
            }
            prop_assert_eq!(written.is_some(), node.plain());
        }
    }
}
