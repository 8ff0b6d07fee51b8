//! Launch files (`*.toml`): which kernel to run, its grid and block, its
//! arguments and the buffers behind them. The field names are a contract that
//! other tools write (issue 2), so unknown fields are errors.

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::Deserialize;

use crate::error::InputError;

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
}

#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Argument {
    Buffer(String),
    Integer(i64),
    Float(f64),
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferSpec {
    #[serde(rename = "type")]
    pub element: ElementType,
    /// Number of elements.
    pub len: u64,
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
    F32,
    F64,
}

impl ElementType {
    pub fn size(self) -> u64 {
        match self {
            ElementType::U8 | ElementType::I8 => 1,
            ElementType::U16 | ElementType::I16 => 2,
            ElementType::U32 | ElementType::I32 | ElementType::F32 => 4,
            ElementType::U64 | ElementType::I64 | ElementType::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, ElementType::F32 | ElementType::F64)
    }

    pub fn is_signed(self) -> bool {
        matches!(
            self,
            ElementType::I8 | ElementType::I16 | ElementType::I32 | ElementType::I64
        )
    }
}

/// How a buffer starts.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Init {
    #[default]
    #[serde(skip)]
    Zero,
    /// `"zero"` or `"iota"`.
    Named(NamedInit),
    Table(TableInit),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NamedInit {
    Zero,
    Iota,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "lowercase")]
pub enum TableInit {
    /// Every element this value.
    Fill(f64),
    /// Seeded pseudo-random values: integers uniform over the type, floats
    /// uniform in [0, 1).
    Random(u64),
    /// Raw little-endian contents, relative to the launch file.
    File(PathBuf),
}

impl LaunchFile {
    /// Reads and parses a launch file; errors name the file, line and key.
    pub fn load(path: &Path) -> Result<LaunchFile, InputError> {
        let text = std::fs::read_to_string(path).map_err(|error| InputError::Io {
            path: path.to_path_buf(),
            message: error.to_string(),
        })?;
        crate::error::parse_toml(path, &text)
    }

    /// The directory relative paths in the file are taken from.
    pub fn base_dir(path: &Path) -> PathBuf {
        path.parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."))
    }

    /// Grid or block as three dimensions.
    pub fn dims(values: &[u32], what: &str, path: &Path) -> Result<[u32; 3], InputError> {
        if values.is_empty() || values.len() > 3 {
            return Err(InputError::Launch {
                path: path.to_path_buf(),
                message: format!("`{what}` needs 1 to 3 numbers, not {}", values.len()),
            });
        }
        let mut dims = [1; 3];
        dims[..values.len()].copy_from_slice(values);
        Ok(dims)
    }
}
