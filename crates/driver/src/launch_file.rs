//! Launch files (`*.toml`): which kernel to run, its grid and block, its
//! arguments and the buffers behind them. The field names are a contract that
//! other tools write (issue 2), so unknown fields are errors.

use std::fmt;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// A launch file as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchFile {
    /// The kernel's source, relative to the launch file.
    pub source: PathBuf,
    /// The entry point's name.
    pub kernel: String,
    /// One to three numbers; missing dimensions are 1.
    pub grid: Vec<u32>,
    pub block: Vec<u32>,
    /// Dynamic shared memory per block, in bytes.
    #[serde(default)]
    pub shared_bytes: u32,
    /// In parameter order: a string names a buffer, a number is a scalar.
    #[serde(default)]
    pub args: Vec<Argument>,
    /// Buffers by name, in the order written (so global addresses are stable).
    #[serde(default)]
    pub buffers: IndexMap<String, BufferSpec>,
    /// For `.cu` sources: preprocessor definitions, `"N=64"` for `-DN=64`.
    #[serde(default)]
    pub defines: Vec<String>,
    /// For `.cu` sources: include directories, relative to this file.
    #[serde(default)]
    pub include: Vec<PathBuf>,
    /// For `.cu` sources: further NVRTC options (`["-G", "-lineinfo"]`,
    /// `["--use_fast_math"]`), after warpsim's own.
    #[serde(default)]
    pub nvrtc_options: Vec<String>,
    /// Registers per thread, 1 to 255, when the launch says them; else
    /// they come from nvJitLink or a default (`registers.rs`).
    #[serde(default, deserialize_with = "registers")]
    pub registers: Option<u32>,
}

/// The most registers a thread can have on every GPU warpsim models.
pub const MAX_REGISTERS_PER_THREAD: u32 = 255;

/// `registers = N`: a whole number from 1 to 255, the value named in the
/// message when it is not one.
fn registers<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u32>, D::Error> {
    struct RegistersVisitor;

    impl RegistersVisitor {
        fn refuse<E: de::Error>(value: impl fmt::Display) -> E {
            E::custom(format!(
                "`registers` is {value}; it must be a whole number of registers per thread \
                 from 1 to {MAX_REGISTERS_PER_THREAD}"
            ))
        }
    }

    impl<'de> Visitor<'de> for RegistersVisitor {
        type Value = Option<u32>;

        fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
            write!(
                formatter,
                "a whole number of registers per thread from 1 to {MAX_REGISTERS_PER_THREAD}"
            )
        }

        fn visit_i64<E: de::Error>(self, value: i64) -> Result<Option<u32>, E> {
            match u32::try_from(value) {
                Ok(count) if (1..=MAX_REGISTERS_PER_THREAD).contains(&count) => Ok(Some(count)),
                _ => Err(RegistersVisitor::refuse(value)),
            }
        }

        fn visit_u64<E: de::Error>(self, value: u64) -> Result<Option<u32>, E> {
            match u32::try_from(value) {
                Ok(count) if (1..=MAX_REGISTERS_PER_THREAD).contains(&count) => Ok(Some(count)),
                _ => Err(RegistersVisitor::refuse(value)),
            }
        }

        fn visit_f64<E: de::Error>(self, value: f64) -> Result<Option<u32>, E> {
            Err(RegistersVisitor::refuse(value))
        }

        fn visit_str<E: de::Error>(self, value: &str) -> Result<Option<u32>, E> {
            Err(RegistersVisitor::refuse(format!("\"{value}\"")))
        }

        fn visit_bool<E: de::Error>(self, value: bool) -> Result<Option<u32>, E> {
            Err(RegistersVisitor::refuse(value))
        }

        fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Option<u32>, A::Error> {
            Err(RegistersVisitor::refuse("an array"))
        }

        fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Option<u32>, A::Error> {
            Err(RegistersVisitor::refuse("a table or a date"))
        }
    }

    deserializer.deserialize_any(RegistersVisitor)
}

/// An argument: a string names a buffer, a number is a scalar, an array of
/// fields is a struct passed by value.
#[derive(Clone, Debug, PartialEq)]
pub enum Argument {
    Buffer(String),
    Integer(i64),
    Float(f64),
    /// A struct (`.param .align 8 .b8 p[24]` in PTX): its fields in order,
    /// each `{ TYPE = VALUE }`, laid out as C lays out a struct.
    Struct(Vec<StructField>),
}

/// What an argument may be, for messages.
const ARGUMENT_FORMS: &str = "an argument is a buffer name (string), a number, or a struct's fields ([{ f32 = 1.5 }, { ptr = \"A\" }])";

/// One field of a struct argument: `{ f32 = 1.5 }`, `{ i32 = [1, 2, 3] }`
/// (an array field), `{ ptr = "A" }` (a buffer's address), with an optional
/// `offset = N` in bytes where C's layout is not what the struct has.
#[derive(Clone, Debug, PartialEq)]
pub struct StructField {
    pub ty: FieldType,
    pub values: Vec<FieldValue>,
    pub offset: Option<u64>,
}

/// The type of a struct field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldType {
    Element(ElementType),
    /// A device pointer: 8 bytes holding a buffer's address (or 0).
    Pointer,
}

impl FieldType {
    /// Bytes per element (also its alignment, as in C).
    pub fn size(self) -> u64 {
        match self {
            FieldType::Element(element) => element.size(),
            FieldType::Pointer => 8,
        }
    }

    fn from_name(name: &str) -> Option<FieldType> {
        if name == "ptr" {
            return Some(FieldType::Pointer);
        }
        ElementType::deserialize(de::value::StrDeserializer::<de::value::Error>::new(name))
            .ok()
            .map(FieldType::Element)
    }
}

impl fmt::Display for FieldType {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            FieldType::Element(element) => element.fmt(f),
            FieldType::Pointer => f.write_str("ptr"),
        }
    }
}

/// A struct field's value: a number, or a buffer name for a pointer.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldValue {
    Integer(i64),
    Float(f64),
    Buffer(String),
}

/// What a struct field may be, for messages.
const FIELD_FORMS: &str =
    "a struct field is { TYPE = VALUE } with TYPE one of u8 u16 u32 u64 i8 i16 i32 i64 f16 bf16 f32 f64 ptr (and optionally offset = BYTES)";

impl<'de> Deserialize<'de> for StructField {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<StructField, D::Error> {
        struct FieldVisitor;

        impl<'de> Visitor<'de> for FieldVisitor {
            type Value = StructField;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str(FIELD_FORMS)
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StructField, A::Error> {
                let mut typed = None;
                let mut offset = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key == "offset" {
                        offset = Some(map.next_value::<u64>()?);
                        continue;
                    }
                    let Some(ty) = FieldType::from_name(&key) else {
                        return Err(de::Error::custom(format!("{FIELD_FORMS}, not `{key}`")));
                    };
                    if typed.is_some() {
                        return Err(de::Error::custom(format!(
                            "{FIELD_FORMS}: one type per field, but `{key}` is a second"
                        )));
                    }
                    let values = match map.next_value::<FieldValues>()? {
                        FieldValues(values) if values.is_empty() => {
                            return Err(de::Error::custom("an array field needs values"))
                        }
                        FieldValues(values) => values,
                    };
                    typed = Some((ty, values));
                }
                let Some((ty, values)) = typed else {
                    return Err(de::Error::custom(format!(
                        "{FIELD_FORMS}, but it has no type"
                    )));
                };
                Ok(StructField { ty, values, offset })
            }
        }

        deserializer.deserialize_map(FieldVisitor)
    }
}

/// A field's value or values (an array field).
struct FieldValues(Vec<FieldValue>);

impl<'de> Deserialize<'de> for FieldValues {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<FieldValues, D::Error> {
        struct ValuesVisitor;

        impl<'de> Visitor<'de> for ValuesVisitor {
            type Value = FieldValues;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a number, a buffer name, or an array of them")
            }

            fn visit_i64<E: de::Error>(self, value: i64) -> Result<FieldValues, E> {
                Ok(FieldValues(vec![FieldValue::Integer(value)]))
            }

            fn visit_u64<E: de::Error>(self, value: u64) -> Result<FieldValues, E> {
                i64::try_from(value)
                    .map(|value| FieldValues(vec![FieldValue::Integer(value)]))
                    .map_err(|_| E::custom(format!("{value} is too large for a field")))
            }

            fn visit_f64<E: de::Error>(self, value: f64) -> Result<FieldValues, E> {
                Ok(FieldValues(vec![FieldValue::Float(value)]))
            }

            fn visit_str<E: de::Error>(self, value: &str) -> Result<FieldValues, E> {
                Ok(FieldValues(vec![FieldValue::Buffer(value.to_string())]))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FieldValues, A::Error> {
                let mut values = Vec::new();
                while let Some(FieldValues(more)) = seq.next_element::<FieldValues>()? {
                    if more.len() != 1 {
                        return Err(de::Error::custom("an array field's values are not arrays"));
                    }
                    values.extend(more);
                }
                Ok(FieldValues(values))
            }
        }

        deserializer.deserialize_any(ValuesVisitor)
    }
}

impl<'de> Deserialize<'de> for Argument {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Argument, D::Error> {
        struct ArgumentVisitor;

        impl<'de> Visitor<'de> for ArgumentVisitor {
            type Value = Argument;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a buffer name (string) or a number")
            }

            fn visit_i64<E: de::Error>(self, value: i64) -> Result<Argument, E> {
                Ok(Argument::Integer(value))
            }

            fn visit_u64<E: de::Error>(self, value: u64) -> Result<Argument, E> {
                i64::try_from(value)
                    .map(Argument::Integer)
                    .map_err(|_| E::custom(format!("{value} is too large for an argument")))
            }

            fn visit_f64<E: de::Error>(self, value: f64) -> Result<Argument, E> {
                Ok(Argument::Float(value))
            }

            fn visit_str<E: de::Error>(self, value: &str) -> Result<Argument, E> {
                Ok(Argument::Buffer(value.to_string()))
            }

            fn visit_bool<E: de::Error>(self, value: bool) -> Result<Argument, E> {
                Err(E::custom(format!(
                    "{ARGUMENT_FORMS}, not a boolean (`{value}`)"
                )))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Argument, A::Error> {
                let mut fields = Vec::new();
                while let Some(field) = seq.next_element::<StructField>()? {
                    fields.push(field);
                }
                Ok(Argument::Struct(fields))
            }

            fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Argument, A::Error> {
                Err(de::Error::custom(format!(
                    "{ARGUMENT_FORMS}, not a table or a date"
                )))
            }
        }

        deserializer.deserialize_any(ArgumentVisitor)
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferSpec {
    #[serde(rename = "type")]
    pub element: ElementType,
    /// Number of elements. It may be left out when `init` says how many
    /// there are (an array of values, an `.npy` file).
    pub len: Option<u64>,
    #[serde(default)]
    pub init: Init,
}

/// Element types of buffers, as launch files spell them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElementType {
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
    F16,
    BF16,
    F32,
    F64,
}

impl fmt::Display for ElementType {
    /// As launch files spell it: `f32`.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            ElementType::U8 => "u8",
            ElementType::U16 => "u16",
            ElementType::U32 => "u32",
            ElementType::U64 => "u64",
            ElementType::I8 => "i8",
            ElementType::I16 => "i16",
            ElementType::I32 => "i32",
            ElementType::I64 => "i64",
            ElementType::F16 => "f16",
            ElementType::BF16 => "bf16",
            ElementType::F32 => "f32",
            ElementType::F64 => "f64",
        })
    }
}

impl ElementType {
    pub fn size(self) -> u64 {
        match self {
            ElementType::U8 | ElementType::I8 => 1,
            ElementType::U16 | ElementType::I16 | ElementType::F16 | ElementType::BF16 => 2,
            ElementType::U32 | ElementType::I32 | ElementType::F32 => 4,
            ElementType::U64 | ElementType::I64 | ElementType::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(
            self,
            ElementType::F16 | ElementType::BF16 | ElementType::F32 | ElementType::F64
        )
    }

    pub fn is_signed(self) -> bool {
        matches!(
            self,
            ElementType::I8 | ElementType::I16 | ElementType::I32 | ElementType::I64
        )
    }
}

/// How a buffer starts.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Init {
    /// No `init`: zeros.
    #[default]
    Zero,
    /// `"zero"` or `"iota"`.
    Named(NamedInit),
    Table(TableInit),
    /// `[1, 2, 3]`: the elements' values, in order.
    Values(Vec<Number>),
}

/// A number as TOML wrote it: an integer or a float.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    Integer(i64),
    Float(f64),
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Number::Integer(value) => write!(f, "{value}"),
            Number::Float(value) => write!(f, "{value}"),
        }
    }
}

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Number, D::Error> {
        struct NumberVisitor;

        impl<'de> Visitor<'de> for NumberVisitor {
            type Value = Number;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a number")
            }

            fn visit_i64<E: de::Error>(self, value: i64) -> Result<Number, E> {
                Ok(Number::Integer(value))
            }

            fn visit_u64<E: de::Error>(self, value: u64) -> Result<Number, E> {
                // TOML integers are i64; larger ones are written as floats.
                Ok(i64::try_from(value)
                    .map(Number::Integer)
                    .unwrap_or(Number::Float(value as f64)))
            }

            fn visit_f64<E: de::Error>(self, value: f64) -> Result<Number, E> {
                Ok(Number::Float(value))
            }

            fn visit_str<E: de::Error>(self, value: &str) -> Result<Number, E> {
                Err(E::custom(format!(
                    "an `init` array holds numbers, not \"{value}\""
                )))
            }

            fn visit_bool<E: de::Error>(self, value: bool) -> Result<Number, E> {
                Err(E::custom(format!(
                    "an `init` array holds numbers, not `{value}`"
                )))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Number, A::Error> {
                Err(de::Error::custom(
                    "an `init` array holds numbers, not arrays (it is one-dimensional)",
                ))
            }

            fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Number, A::Error> {
                Err(de::Error::custom(
                    "an `init` array holds numbers, not tables or dates",
                ))
            }
        }

        deserializer.deserialize_any(NumberVisitor)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NamedInit {
    Zero,
    Iota,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TableInit {
    /// `{ fill = N }`: every element this value.
    Fill(f64),
    /// `{ random = SEED }`: seeded pseudo-random values, integers uniform
    /// over the type, floats uniform in [0, 1).
    Random(u64),
    /// `{ file = "PATH" }`: raw little-endian contents, relative to the
    /// launch file.
    File(PathBuf),
    /// `{ npy = "PATH" }`: a NumPy `.npy` file of the buffer's type,
    /// relative to the launch file.
    Npy(PathBuf),
}

/// What `init` may be, for messages.
const INIT_FORMS: &str = "`init` must be \"zero\", \"iota\", { fill = N }, { random = SEED }, \
     { file = \"PATH\" }, { npy = \"PATH\" } or an array of numbers";

impl<'de> Deserialize<'de> for Init {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Init, D::Error> {
        struct InitVisitor;

        impl<'de> Visitor<'de> for InitVisitor {
            type Value = Init;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str(INIT_FORMS)
            }

            fn visit_str<E: de::Error>(self, value: &str) -> Result<Init, E> {
                match value {
                    "zero" => Ok(Init::Named(NamedInit::Zero)),
                    "iota" => Ok(Init::Named(NamedInit::Iota)),
                    _ => Err(E::custom(format!("{INIT_FORMS}, not \"{value}\""))),
                }
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Init, A::Error> {
                let Some(key) = map.next_key::<String>()? else {
                    return Err(de::Error::custom(format!(
                        "{INIT_FORMS}, not an empty table"
                    )));
                };
                let init = match key.as_str() {
                    "fill" => TableInit::Fill(map.next_value()?),
                    "random" => TableInit::Random(map.next_value()?),
                    "file" => TableInit::File(map.next_value()?),
                    "npy" => TableInit::Npy(map.next_value()?),
                    _ if key.starts_with("$__toml_private") => {
                        return Err(de::Error::custom(format!("{INIT_FORMS}, not a date")))
                    }
                    _ => {
                        return Err(de::Error::custom(format!(
                            "{INIT_FORMS}, not a table with `{key}`"
                        )))
                    }
                };
                if let Some(other) = map.next_key::<String>()? {
                    return Err(de::Error::custom(format!(
                        "{INIT_FORMS}: a table with `{key}` cannot also have `{other}`"
                    )));
                }
                Ok(Init::Table(init))
            }

            fn visit_bool<E: de::Error>(self, value: bool) -> Result<Init, E> {
                Err(E::custom(format!("{INIT_FORMS}, not `{value}`")))
            }

            fn visit_i64<E: de::Error>(self, value: i64) -> Result<Init, E> {
                Err(E::custom(format!(
                    "{INIT_FORMS}, not `{value}` (to fill, write {{ fill = {value} }})"
                )))
            }

            fn visit_f64<E: de::Error>(self, value: f64) -> Result<Init, E> {
                Err(E::custom(format!(
                    "{INIT_FORMS}, not `{value}` (to fill, write {{ fill = {value} }})"
                )))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Init, A::Error> {
                let mut values = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(value) = seq.next_element::<Number>()? {
                    values.push(value);
                }
                Ok(Init::Values(values))
            }
        }

        deserializer.deserialize_any(InitVisitor)
    }
}

impl LaunchFile {
    /// The directory relative paths in the file are taken from.
    pub fn base_dir(path: &Path) -> PathBuf {
        path.parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."))
    }

    /// Grid or block (`what`) as three dimensions, or why they are not.
    pub fn dims(values: &[u32], what: &str) -> Result<[u32; 3], String> {
        if values.is_empty() || values.len() > 3 {
            return Err(format!(
                "`{what}` needs 1 to 3 numbers, not {}",
                values.len()
            ));
        }
        let mut dims = [1; 3];
        dims[..values.len()].copy_from_slice(values);
        Ok(dims)
    }
}
