//! Builds the launch's global buffers from their launch-file specifications,
//! and the kernel's parameter buffer from its arguments.
//!
//! A buffer is checked when the launch is prepared ([`plan_buffer`]: its
//! size, its values, its file's length or `.npy` header) and built when it
//! runs ([`BufferPlan::build`]): the values are written straight into the
//! words of global memory, and files are read in pieces into them, so a
//! buffer takes its size in host memory once.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use warpsim_ir::{ScalarType, TypeKind};
use warpsim_machine::arith::{f64_to_bf16, f64_to_f16};
use warpsim_machine::memory::{buffer_base, BufferWords, MAX_BUFFER_BYTES};
use warpsim_machine::program::ParamSlot;
use warpsim_machine::random::split_mix64_at;

use crate::error::InputError;
use crate::launch_file::{
    Argument, BufferSpec, ElementType, FieldType, FieldValue, Init, NamedInit, Number, StructField,
    TableInit,
};
use crate::npy;
use crate::toml_file::TomlFile;

/// The largest buffer a launch file may ask for: well inside the simulated
/// address map, and small enough to allocate on an ordinary host.
const MAX_HOST_BUFFER_BYTES: u64 = if MAX_BUFFER_BYTES < 1 << 32 {
    MAX_BUFFER_BYTES
} else {
    1 << 32
};

/// How much of a file is read at a time: large enough that the system calls
/// cost nothing, small enough not to count beside the buffer itself.
const READ_CHUNK_BYTES: u64 = 1 << 20;

/// A buffer of the launch file, checked and ready to be built, any number
/// of times (one per execution of the launch).
#[derive(Clone, Debug)]
pub struct BufferPlan {
    pub name: String,
    pub element: ElementType,
    /// Elements.
    pub len: u64,
    values: InitialValues,
}

/// Where a buffer's initial elements come from.
#[derive(Clone, Debug)]
enum InitialValues {
    /// Every element the same bits: no `init`, `"zero"`, `{ fill = N }`.
    Repeated(u64),
    /// Element `i` is `i`.
    Iota,
    /// SplitMix64 from this seed.
    Random(u64),
    /// The elements' bits, from an inline array.
    Listed(Vec<u64>),
    /// A file's bytes from `offset` on (0 for raw files, past the header
    /// for `.npy` files).
    File { path: PathBuf, offset: u64 },
    /// The bytes themselves (a module variable's initial value).
    Bytes(Vec<u8>),
}

/// A buffer could not be built when the launch ran: the host had not the
/// memory, or its file changed or could not be read since it was checked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("buffer `{buffer}`: {message}")]
pub struct BuildError {
    pub buffer: String,
    pub message: String,
}

impl BufferPlan {
    /// A buffer that starts as `bytes`: a module's `.global` variable that
    /// the launch file does not initialise, whose elements are of the type
    /// it is declared with (bytes for `.b8` and types buffers lack).
    pub fn from_bytes(name: &str, declared: ScalarType, bytes: Vec<u8>) -> BufferPlan {
        let element = match declared {
            ScalarType::S8 => ElementType::I8,
            ScalarType::B16 | ScalarType::U16 => ElementType::U16,
            ScalarType::S16 => ElementType::I16,
            ScalarType::B32 | ScalarType::U32 => ElementType::U32,
            ScalarType::S32 => ElementType::I32,
            ScalarType::B64 | ScalarType::U64 => ElementType::U64,
            ScalarType::S64 => ElementType::I64,
            ScalarType::F16 => ElementType::F16,
            ScalarType::Bf16 => ElementType::BF16,
            ScalarType::F32 => ElementType::F32,
            ScalarType::F64 => ElementType::F64,
            _ => ElementType::U8,
        };
        BufferPlan {
            name: name.to_string(),
            element,
            len: bytes.len() as u64 / element.size(),
            values: InitialValues::Bytes(bytes),
        }
    }

    /// The buffer's size in bytes.
    pub fn bytes(&self) -> u64 {
        self.len * self.element.size()
    }

    /// The buffer's words, holding its initial contents.
    pub fn build(&self) -> Result<BufferWords, BuildError> {
        let error = |message: String| BuildError {
            buffer: self.name.clone(),
            message,
        };
        let too_large = |allocation: warpsim_machine::memory::AllocationError| {
            error(format!(
                "{} ({}); the host cannot give that much memory",
                allocation,
                human_bytes(allocation.bytes)
            ))
        };
        let size = self.element.size() as u32;
        // Contents that each element's index decides are made on the
        // current rayon pool's threads; those that come in order, read.
        let from_index = |element: &(dyn Fn(u64) -> u64 + Sync)| {
            BufferWords::from_elements(self.bytes(), size, element).map_err(too_large)
        };
        match &self.values {
            InitialValues::Repeated(bits) => from_index(&|_| *bits),
            InitialValues::Iota => {
                let convert = iota_bits(self.element);
                from_index(&|index| convert(index))
            }
            InitialValues::Random(seed) => {
                let convert = random_bits(self.element);
                from_index(&|index| convert(split_mix64_at(*seed, index)))
            }
            InitialValues::Listed(values) => {
                from_index(&|index| values.get(index as usize).copied().unwrap_or(0))
            }
            InitialValues::File { path, offset } => {
                let mut words = BufferWords::with_len(self.bytes()).map_err(too_large)?;
                read_into(&mut words, path, *offset, self.bytes()).map_err(error)?;
                Ok(words)
            }
            InitialValues::Bytes(bytes) => {
                let mut words = BufferWords::with_len(self.bytes()).map_err(too_large)?;
                words.extend_from_bytes(bytes);
                Ok(words)
            }
        }
    }
}

/// Reads `bytes` bytes of the file at `path`, from `offset`, into `words`,
/// a piece at a time.
fn read_into(words: &mut BufferWords, path: &Path, offset: u64, bytes: u64) -> Result<(), String> {
    let file_len = regular_file_len(path)?;
    if file_len != offset + bytes {
        return Err(format!(
            "{} has changed since the launch was prepared: it has {file_len} bytes, not {}",
            path.display(),
            offset + bytes
        ));
    }
    let read_error = |io: std::io::Error| format!("cannot read {}: {io}", path.display());
    let mut file = File::open(path).map_err(read_error)?;
    file.seek(SeekFrom::Start(offset)).map_err(read_error)?;
    let mut chunk = vec![0u8; READ_CHUNK_BYTES.min(bytes) as usize];
    let mut remaining = bytes;
    while remaining > 0 {
        let piece = &mut chunk[..remaining.min(READ_CHUNK_BYTES) as usize];
        file.read_exact(piece).map_err(read_error)?;
        words.extend_from_bytes(piece);
        remaining -= piece.len() as u64;
    }
    Ok(())
}

/// The length of the regular file at `path`, or why it cannot be an input:
/// it is missing, or it is a device, a pipe or a directory, which have no
/// length to check and may never end (`/dev/zero`) or block (a FIFO).
fn regular_file_len(path: &Path) -> Result<u64, String> {
    // `metadata` follows symbolic links and opens nothing, so a FIFO is
    // recognised without blocking on it.
    let metadata =
        std::fs::metadata(path).map_err(|io| format!("cannot read {}: {io}", path.display()))?;
    if !metadata.is_file() {
        return Err(format!(
            "{} is {}; an input file must be a regular file",
            path.display(),
            file_kind(&metadata.file_type())
        ));
    }
    Ok(metadata.len())
}

/// What a file that is not a regular file is, for messages.
fn file_kind(file_type: &std::fs::FileType) -> &'static str {
    if file_type.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// Checks buffer `name` of `launch` and says how to build it; errors point
/// at its keys in `launch`. Nothing of the buffer's size is allocated here.
pub fn plan_buffer(
    name: &str,
    spec: &BufferSpec,
    base_dir: &Path,
    launch: &TomlFile,
) -> Result<BufferPlan, InputError> {
    let error = |key: &[&str], message: String, label: String| -> InputError {
        let mut path = vec!["buffers", name];
        path.extend_from_slice(key);
        launch
            .error(format!("buffer `{name}`: {message}"))
            .at(&path, label)
            .into_error()
    };
    let element = spec.element;
    // `len` where the launch file gives it, or the count `init` gives.
    let len_from = |count: u64, what: &str| -> Result<u64, InputError> {
        match spec.len {
            Some(len) if len != count => Err(launch
                .error(format!(
                    "buffer `{name}`: `init` {what}, but `len` is {len}"
                ))
                .at(&["buffers", name, "init"], format!("{count} elements"))
                .also_at(&["buffers", name, "len"], format!("{len} elements"))
                .into_error()),
            _ => Ok(count),
        }
    };
    // `len` as the launch file gives it, and the bytes it takes.
    let declared_size = || -> Result<(u64, u64), InputError> {
        let Some(len) = spec.len else {
            return Err(launch
                .error(format!(
                    "buffer `{name}` has no `len`; it may be left out only when `init` is an array or an .npy file"
                ))
                .at(&["buffers", name], "")
                .into_error());
        };
        Ok((len, check_size(len, element, &error)?))
    };
    let (len, values) = match &spec.init {
        Init::Values(numbers) => {
            let count = numbers.len() as u64;
            let len = len_from(count, &format!("has {count} values"))?;
            check_size(len, element, &error)?;
            let mut bits = Vec::with_capacity(numbers.len());
            for (index, &number) in numbers.iter().enumerate() {
                let value = number_bits(element, number).map_err(|message| {
                    error(
                        &["init", &index.to_string()],
                        format!("`init`[{index}]: {message}"),
                        String::new(),
                    )
                })?;
                bits.push(value);
            }
            (len, InitialValues::Listed(bits))
        }
        Init::Table(TableInit::Npy(file)) => {
            let path = base_dir.join(file);
            let header = npy_header(&path, element)
                .map_err(|(message, label)| error(&["init"], message, label))?;
            let count = header.element_count().unwrap_or(u64::MAX);
            let len = len_from(
                count,
                &format!(
                    "is {} with {count} elements (shape {})",
                    path.display(),
                    header.shape_text()
                ),
            )?;
            let bytes = check_size(len, element, &error)?;
            let file_len = regular_file_len(&path)
                .map_err(|message| error(&["init"], message, String::new()))?;
            if file_len != header.data_offset + bytes {
                return Err(error(
                    &["init"],
                    format!(
                        "{} has {file_len} bytes, but its {}-byte header and {len} elements of {element} take {}",
                        path.display(),
                        header.data_offset,
                        header.data_offset + bytes
                    ),
                    format!("{file_len} bytes"),
                ));
            }
            (
                len,
                InitialValues::File {
                    path,
                    offset: header.data_offset,
                },
            )
        }
        Init::Table(TableInit::File(file)) => {
            let (len, bytes) = declared_size()?;
            let path = base_dir.join(file);
            let file_len = regular_file_len(&path)
                .map_err(|message| error(&["init"], message, String::new()))?;
            if file_len != bytes {
                return Err(error(
                    &["init"],
                    format!(
                        "{} has {file_len} bytes, but {len} elements of {element} take {bytes}",
                        path.display(),
                    ),
                    format!("{file_len} bytes"),
                ));
            }
            (len, InitialValues::File { path, offset: 0 })
        }
        Init::Table(TableInit::Fill(value)) => {
            let (len, _) = declared_size()?;
            // Checked only when there is an element to fill.
            let bits = if len > 0 {
                number_bits(element, Number::Float(*value)).map_err(|message| {
                    error(&["init"], format!("fill value {message}"), String::new())
                })?
            } else {
                0
            };
            (len, InitialValues::Repeated(bits))
        }
        Init::Zero | Init::Named(NamedInit::Zero) => {
            (declared_size()?.0, InitialValues::Repeated(0))
        }
        Init::Named(NamedInit::Iota) => (declared_size()?.0, InitialValues::Iota),
        Init::Table(TableInit::Random(seed)) => (declared_size()?.0, InitialValues::Random(*seed)),
    };
    Ok(BufferPlan {
        name: name.to_string(),
        element,
        len,
        values,
    })
}

/// The bytes `len` elements of `element` take, when a buffer may hold them.
fn check_size(
    len: u64,
    element: ElementType,
    error: &impl Fn(&[&str], String, String) -> InputError,
) -> Result<u64, InputError> {
    len.checked_mul(element.size())
        .filter(|&bytes| bytes <= MAX_HOST_BUFFER_BYTES)
        .ok_or_else(|| {
            error(
                &["len"],
                format!(
                    "{len} elements is more than the {} GiB a buffer may hold",
                    MAX_HOST_BUFFER_BYTES >> 30
                ),
                format!(
                    "at most {} elements of {element}",
                    MAX_HOST_BUFFER_BYTES / element.size()
                ),
            )
        })
}

/// The header of the `.npy` file at `path`, checked against a buffer of
/// `element`: a regular file, little-endian data of the buffer's type, in C
/// order. The error is a message and a label for the `init` key.
fn npy_header(path: &Path, element: ElementType) -> Result<npy::NpyHeader, (String, String)> {
    let plain = |message: String| (message, String::new());
    regular_file_len(path).map_err(plain)?;
    let mut file =
        File::open(path).map_err(|io| plain(format!("cannot read {}: {io}", path.display())))?;
    let header = npy::read_header(&mut std::io::BufReader::new(&mut file))
        .map_err(|problem| plain(format!("{}: {problem}", path.display())))?;
    let accepted = npy::accepted_descrs(element);
    if !accepted.contains(&header.descr.as_str()) {
        let spelled: Vec<String> = accepted.iter().map(|descr| format!("'{descr}'")).collect();
        let big_endian = if header.descr.starts_with('>') {
            " (big-endian; warpsim reads little-endian data)"
        } else {
            ""
        };
        return Err((
            format!(
                "{} holds '{}' values{big_endian}, but the buffer is {element}, which reads {}",
                path.display(),
                header.descr,
                spelled.join(" or ")
            ),
            format!("'{}'", header.descr),
        ));
    }
    // Fortran order lays out the same bytes as C order when at most one
    // dimension is longer than 1.
    let long_dims = header.shape.iter().filter(|&&dim| dim > 1).count();
    if header.fortran_order && long_dims > 1 {
        return Err((
            format!(
                "{} is in Fortran (column-major) order, shape {}; warpsim reads C order (save np.ascontiguousarray(a))",
                path.display(),
                header.shape_text()
            ),
            "Fortran order".to_string(),
        ));
    }
    if header.element_count().is_none() {
        return Err(plain(format!(
            "{}: its shape {} holds more elements than can be counted",
            path.display(),
            header.shape_text()
        )));
    }
    Ok(header)
}

/// The bits of `value` as an element of type `element`, or why it cannot be
/// one (an integer type takes integers that fit). The message starts with
/// the value, so callers can say which value it is.
fn number_bits(element: ElementType, value: Number) -> Result<u64, String> {
    if element.is_float() {
        let float = match value {
            // One rounding, from the integer as written, for f32; through
            // f64 (exact up to 2^53) for the others.
            Number::Integer(integer) if element == ElementType::F32 => {
                return Ok(u64::from((integer as f32).to_bits()))
            }
            Number::Integer(integer) => integer as f64,
            Number::Float(float) => float,
        };
        return Ok(float_bits(element, float));
    }
    let bits = element.size() as u32 * 8;
    let (min, end) = if element.is_signed() {
        (-(1i128 << (bits - 1)), 1i128 << (bits - 1))
    } else {
        (0, 1i128 << bits)
    };
    let integer = match value {
        Number::Integer(integer) => i128::from(integer),
        Number::Float(float) => {
            if float.fract() != 0.0 || !float.is_finite() {
                return Err(format!(
                    "{float} is not an integer, but the buffer holds {element}"
                ));
            }
            // The range is [min, end): the end, a power of two, is exact as
            // an f64, where `end - 1` would round back up to it for 64 bits.
            if float < min as f64 || float >= end as f64 {
                return Err(format!("{float} does not fit in {element}"));
            }
            float as i128
        }
    };
    if integer < min || integer >= end {
        return Err(format!("{integer} does not fit in {element}"));
    }
    Ok(integer as u64 & (u64::MAX >> (64 - bits)))
}

/// The bits of the float `value` as an element of float type `element`,
/// rounded to nearest even.
fn float_bits(element: ElementType, value: f64) -> u64 {
    match element {
        ElementType::F16 => u64::from(f64_to_f16(value)),
        ElementType::BF16 => u64::from(f64_to_bf16(value)),
        ElementType::F32 => u64::from((value as f32).to_bits()),
        _ => value.to_bits(),
    }
}

/// Element `index` of an `"iota"` buffer of `element`: the index, wrapped
/// to an integer type's width or rounded to nearest even for floats.
fn iota_bits(element: ElementType) -> fn(u64) -> u64 {
    match element {
        ElementType::F16 => |index| u64::from(f64_to_f16(index as f64)),
        ElementType::BF16 => |index| u64::from(f64_to_bf16(index as f64)),
        ElementType::F32 => |index| u64::from((index as f32).to_bits()),
        ElementType::F64 => |index| (index as f64).to_bits(),
        // The bytes past the element's size are dropped as it is stored.
        _ => |index| index,
    }
}

/// An element of a `{ random = SEED }` buffer of `element` from 64 random
/// bits: integers take the bits of their width, floats are uniform in
/// [0, 1). `f32` and `f64` take a double made of the top 53 bits (`f32`
/// rounding it); `f16` and `bf16` take the top 11 and 8 bits as a multiple
/// of 2^-11 and 2^-8, which they hold exactly, so they stay below 1.
fn random_bits(element: ElementType) -> fn(u64) -> u64 {
    fn unit(bits: u64) -> f64 {
        (bits >> 11) as f64 / (1u64 << 53) as f64
    }
    match element {
        ElementType::F16 => |bits| u64::from(f64_to_f16((bits >> 53) as f64 / 2048.0)),
        ElementType::BF16 => |bits| u64::from(f64_to_bf16((bits >> 56) as f64 / 256.0)),
        ElementType::F32 => |bits| u64::from((unit(bits) as f32).to_bits()),
        ElementType::F64 => |bits| unit(bits).to_bits(),
        // The bytes past the element's size are dropped as it is stored.
        _ => |bits| bits,
    }
}

/// How much memory the host can give the buffers, and where that figure
/// comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostMemory {
    pub available: u64,
    pub source: &'static str,
}

/// The memory this host can give now: `MemAvailable` of `/proc/meminfo`
/// (what can be allocated without swapping), or less when the process's
/// control group (version 2) is limited to less. `None` where neither can
/// be read; then only the allocation itself can fail.
pub fn host_memory() -> Option<HostMemory> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    let mem_available = meminfo.as_deref().and_then(|text| {
        let line = text
            .lines()
            .find(|line| line.starts_with("MemAvailable:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(HostMemory {
            available: kib.saturating_mul(1024),
            source: "MemAvailable in /proc/meminfo",
        })
    });
    let number =
        |path: &str| -> Option<u64> { std::fs::read_to_string(path).ok()?.trim().parse().ok() };
    // "max" (no limit) does not parse, and leaves MemAvailable alone.
    let cgroup = match (
        number("/sys/fs/cgroup/memory.max"),
        number("/sys/fs/cgroup/memory.current"),
    ) {
        (Some(max), Some(current)) => Some(HostMemory {
            available: max.saturating_sub(current),
            source: "memory.max less memory.current of this control group",
        }),
        _ => None,
    };
    match (mem_available, cgroup) {
        (Some(a), Some(b)) => Some(if b.available < a.available { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// Refuses, before anything is allocated, buffers that together need more
/// memory than the host has (`host`); the error names the largest buffers
/// and their sizes at their keys in `launch`.
pub fn check_host_memory(
    plans: &[BufferPlan],
    launch: &TomlFile,
    host: Option<&HostMemory>,
) -> Result<(), InputError> {
    let Some(host) = host else {
        return Ok(());
    };
    // Buffers are stored in whole 8-byte words.
    let words_bytes = |plan: &BufferPlan| plan.bytes().div_ceil(8) * 8;
    let total: u64 = plans.iter().map(words_bytes).sum();
    if total <= host.available {
        return Ok(());
    }
    let mut largest: Vec<&BufferPlan> = plans.iter().collect();
    largest.sort_by_key(|plan| std::cmp::Reverse(plan.bytes()));
    const SHOWN: usize = 5;
    let what = match plans {
        [only] => format!("buffer `{}` takes", only.name),
        _ => format!("the {} buffers take", plans.len()),
    };
    let mut error = launch.error(format!(
        "{what} {} ({total} bytes), more than the {} of memory this host has available ({})",
        human_bytes(total),
        human_bytes(host.available),
        host.source
    ));
    for (position, plan) in largest.iter().take(SHOWN).enumerate() {
        let path = ["buffers", plan.name.as_str(), "len"];
        let label = format!("`{}`: {}", plan.name, human_bytes(words_bytes(plan)));
        error = if position == 0 {
            error.at(&path, label)
        } else {
            error.also_at(&path, label)
        };
    }
    if largest.len() > SHOWN {
        let rest = &largest[SHOWN..];
        let rest_bytes: u64 = rest.iter().map(|plan| words_bytes(plan)).sum();
        error = error.note(format!(
            "and {} smaller buffers, {} in all",
            rest.len(),
            human_bytes(rest_bytes)
        ));
    }
    Err(error
        .note("warpsim holds every buffer in host memory while the kernel runs")
        .into_error())
}

/// `bytes` for people: `512 bytes`, `1.5 KiB`, `2.0 GiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// The kernel's parameter buffer, and where in it the addresses of the
/// launch file's buffers are: what another machine needs to put its own
/// addresses of the same buffers in their place (`warpsim export`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParameterBuffer {
    pub bytes: Vec<u8>,
    /// The 8-byte slots of `bytes` that hold an address inside one of the
    /// launch file's buffers, in order of their offsets.
    pub pointers: Vec<PointerSlot>,
}

/// An address of a buffer in the parameter buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PointerSlot {
    /// Where the 8-byte address is in the parameter buffer, in bytes.
    pub offset: u32,
    /// The buffer it points into, by its index in launch-file order.
    pub buffer: usize,
    /// How far into the buffer it points, in bytes: 0 for a buffer named
    /// as an argument, more for an integer address given inside a buffer.
    pub buffer_offset: u64,
}

/// Lays out the kernel's arguments in its parameter buffer: a buffer argument
/// becomes the buffer's global address, a number is converted to the
/// parameter's type. Errors point at the argument in `launch`.
pub fn parameter_buffer(
    params: &[ParamSlot],
    param_bytes: u32,
    args: &[Argument],
    buffers: &IndexMap<String, BufferSpec>,
    launch: &TomlFile,
) -> Result<ParameterBuffer, InputError> {
    if params.len() != args.len() {
        let names: Vec<String> = params
            .iter()
            .map(|param| format!("{} .{}", param.name, param.ty))
            .collect();
        let message = format!(
            "the kernel takes {} parameters ({}), but `args` has {}",
            params.len(),
            names.join(", "),
            args.len()
        );
        let error = launch.error(message);
        let error = if launch.key_span(&["args"]).is_some() {
            error.at(
                &["args"],
                format!(
                    "{} argument{}",
                    args.len(),
                    if args.len() == 1 { "" } else { "s" }
                ),
            )
        } else {
            error.at(&["kernel"], "no `args` for its parameters")
        };
        return Err(error.into_error());
    }
    let mut bytes = vec![0u8; param_bytes as usize];
    let mut pointers = Vec::new();
    for (position, (param, arg)) in params.iter().zip(args).enumerate() {
        let context = format!(
            "argument {} (`{}`, .{})",
            position + 1,
            param.name,
            param.ty
        );
        let index = position.to_string();
        let error = |message: String, label: String| -> InputError {
            launch
                .error(format!("{context}: {message}"))
                .at(&["args", &index], label)
                .into_error()
        };
        let param_label = || format!("`{}` is .{}", param.name, param.ty);
        let offset = param.offset as usize;
        if param.is_array {
            let Argument::Struct(fields) = arg else {
                return Err(error(
                    format!(
                        "the parameter is passed by value ({} bytes, a struct); give its fields: [{{ i32 = 1 }}, {{ f32 = 2.5 }}, {{ ptr = \"A\" }}]",
                        param.size
                    ),
                    format!("`{}` is {} bytes", param.name, param.size),
                ));
            };
            let (laid_out, struct_pointers) = struct_bytes(fields, param.size as u64, buffers)
                .map_err(|message| {
                    error(message, format!("`{}` is {} bytes", param.name, param.size))
                })?;
            bytes[offset..offset + laid_out.len()].copy_from_slice(&laid_out);
            pointers.extend(struct_pointers.into_iter().map(|pointer| PointerSlot {
                offset: param.offset + pointer.offset,
                ..pointer
            }));
            continue;
        }
        let size = param.ty.size_bytes() as usize;
        let bits: u64 = match arg {
            Argument::Struct(_) => {
                return Err(error(
                    format!(
                        "a struct's fields are given, but the parameter is a .{} scalar",
                        param.ty
                    ),
                    param_label(),
                ))
            }
            Argument::Buffer(name) => {
                if size != 8 || param.ty.is_float() {
                    return Err(error(
                        format!(
                            "a buffer is passed as a 64-bit address, but the parameter is .{}",
                            param.ty
                        ),
                        param_label(),
                    ));
                }
                let buffer = buffers.get_index_of(name).ok_or_else(|| {
                    let names: Vec<String> =
                        buffers.keys().map(|name| format!("`{name}`")).collect();
                    let note = if names.is_empty() {
                        "the launch file has no [buffers]".to_string()
                    } else {
                        format!("the buffers are {}", names.join(", "))
                    };
                    launch
                        .error(format!("{context}: no buffer named `{name}` in [buffers]"))
                        .at(&["args", &index], "no such buffer")
                        .note(note)
                        .into_error()
                })?;
                pointers.push(PointerSlot {
                    offset: param.offset,
                    buffer,
                    buffer_offset: 0,
                });
                buffer_base(buffer)
            }
            Argument::Integer(value) => scalar_bits(param.ty, i128::from(*value), None)
                .map_err(|message| error(message, param_label()))?,
            Argument::Float(value) => {
                if !param.ty.is_float() {
                    return Err(error(
                        format!(
                            "{value} is not an integer, but the parameter is .{}",
                            param.ty
                        ),
                        param_label(),
                    ));
                }
                scalar_bits(param.ty, 0, Some(*value))
                    .map_err(|message| error(message, param_label()))?
            }
        };
        bytes[offset..offset + size].copy_from_slice(&bits.to_le_bytes()[..size]);
    }
    pointers.sort_by_key(|pointer| pointer.offset);
    Ok(ParameterBuffer { bytes, pointers })
}

/// The buffer among the first `count` that `address` points into, and how
/// far into it, when it points into one.
fn buffer_of_address(address: u64, count: usize) -> Option<(usize, u64)> {
    (0..count).find_map(|index| {
        let base = buffer_base(index);
        (base..buffer_base(index + 1))
            .contains(&address)
            .then(|| (index, address - base))
    })
}

/// The bytes of a struct passed by value (`size` bytes): each field at its
/// offset (C's: the next multiple of its size, unless given), the rest zero;
/// and the pointer fields that hold addresses inside buffers, with their
/// offsets in the struct.
fn struct_bytes(
    fields: &[StructField],
    size: u64,
    buffers: &IndexMap<String, BufferSpec>,
) -> Result<(Vec<u8>, Vec<PointerSlot>), String> {
    let mut bytes = vec![0u8; size as usize];
    let mut pointers = Vec::new();
    let mut end = 0u64;
    for (position, field) in fields.iter().enumerate() {
        let element = field.ty.size();
        let name = format!("field {} ({})", position + 1, field.ty);
        let start = match field.offset {
            Some(offset) if offset % element != 0 => {
                return Err(format!(
                    "{name}: offset {offset} is not a multiple of its size, {element}"
                ))
            }
            Some(offset) => offset,
            None => end.div_ceil(element) * element,
        };
        end = start + element * field.values.len() as u64;
        if end > size {
            return Err(format!(
                "{name} ends at byte {end}, but the struct has {size} bytes"
            ));
        }
        for (index, value) in field.values.iter().enumerate() {
            let at = start + index as u64 * element;
            let mut pointer = |buffer: usize, buffer_offset: u64| {
                pointers.push(PointerSlot {
                    // The struct fits the parameter buffer, whose size is a u32.
                    offset: at as u32,
                    buffer,
                    buffer_offset,
                })
            };
            let bits = match (field.ty, value) {
                (FieldType::Pointer, FieldValue::Buffer(buffer)) => {
                    let index = buffers.get_index_of(buffer).ok_or_else(|| {
                        format!("{name}: no buffer named `{buffer}` in [buffers]")
                    })?;
                    pointer(index, 0);
                    buffer_base(index)
                }
                (FieldType::Pointer, FieldValue::Integer(address)) => {
                    let address = *address as u64;
                    if let Some((index, offset)) = buffer_of_address(address, buffers.len()) {
                        pointer(index, offset);
                    }
                    address
                }
                (FieldType::Pointer, FieldValue::Float(_)) => {
                    return Err(format!(
                        "{name}: a pointer is a buffer name or an integer address"
                    ))
                }
                (FieldType::Element(_), FieldValue::Buffer(buffer)) => {
                    return Err(format!(
                        "{name}: `{buffer}` is a buffer; a buffer's address is a `ptr` field"
                    ))
                }
                (FieldType::Element(element), FieldValue::Integer(value)) => {
                    number_bits(element, Number::Integer(*value))
                        .map_err(|message| format!("{name}: {message}"))?
                }
                (FieldType::Element(element), FieldValue::Float(value)) => {
                    number_bits(element, Number::Float(*value))
                        .map_err(|message| format!("{name}: {message}"))?
                }
            };
            let at = at as usize;
            bytes[at..at + element as usize]
                .copy_from_slice(&bits.to_le_bytes()[..element as usize]);
        }
    }
    Ok((bytes, pointers))
}

/// The bits of a scalar argument of type `ty`, checking that it fits.
fn scalar_bits(ty: ScalarType, integer: i128, float: Option<f64>) -> Result<u64, String> {
    match ty.kind() {
        TypeKind::Float => {
            let value = float.unwrap_or(integer as f64);
            Ok(match ty {
                ScalarType::F32 => u64::from((value as f32).to_bits()),
                // One rounding, to nearest even, from the number as written
                // (a TOML float is an f64; an integer converts exactly or
                // rounds as f64 first, far beyond the half range).
                ScalarType::F16 => u64::from(warpsim_machine::arith::f64_to_f16(value)),
                ScalarType::Bf16 => u64::from(f64_to_bf16(value)),
                ScalarType::F16x2 | ScalarType::Bf16x2 => {
                    let two = if ty == ScalarType::F16x2 {
                        "two halves"
                    } else {
                        "two bfloat16 values"
                    };
                    return Err(format!(
                        "a .{ty} parameter holds {two} and cannot be given as one number; \
                         declare it .b32 and pass the bits of the pair as an integer \
                         (element 0 in the low 16 bits)"
                    ));
                }
                _ => value.to_bits(),
            })
        }
        TypeKind::Predicate => Err("a parameter cannot be a predicate".to_string()),
        kind => {
            // NVRTC declares an `int` parameter `.u32`: unsigned and bit
            // types take negative values too, as their two's complement
            // (C's conversion), from the signed minimum to the unsigned
            // maximum.
            let bits = ty.bits();
            let (min, max) = if kind == TypeKind::Signed {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (-(1i128 << (bits - 1)), (1i128 << bits) - 1)
            };
            if integer < min || integer > max {
                return Err(format!("{integer} does not fit in .{ty}"));
            }
            Ok(integer as u64 & (u64::MAX >> (64 - bits)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A launch file whose buffer section is `buffer` (for buffer `b`).
    fn launch_file(buffer: &str) -> TomlFile {
        let text = format!(
            "source = \"k.kir\"\nkernel = \"k\"\ngrid = [1]\nblock = [1]\nargs = []\n[buffers.b]\n{buffer}\n"
        );
        TomlFile::new(Path::new("launch.toml"), text)
    }

    /// The plan of buffer `b` of a launch file in `dir` whose buffer section is `buffer`.
    fn plan_in(dir: &Path, buffer: &str) -> Result<BufferPlan, InputError> {
        let file = launch_file(buffer);
        let launch: crate::LaunchFile = file.parse()?;
        plan_buffer("b", &launch.buffers["b"], dir, &file)
    }

    /// The built contents of a plan, read back from global memory.
    fn built(plan: &BufferPlan) -> Vec<u8> {
        let mut memory = warpsim_machine::GlobalMemory::new();
        let index = memory.add_words(&plan.name, plan.build().unwrap());
        memory.contents(index)
    }

    /// The contents of buffer `b` of a launch file whose buffer section is `buffer`.
    fn contents(buffer: &str) -> Result<Vec<u8>, InputError> {
        Ok(built(&plan_in(Path::new("."), buffer)?))
    }

    fn halves(bytes: &[u8]) -> Vec<u16> {
        bytes
            .chunks_exact(2)
            .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
            .collect()
    }

    /// A fresh directory for one test's files.
    fn scratch(test: &str) -> PathBuf {
        let dir = std::env::temp_dir()
            .join(format!("warpsim-buffers-{}", std::process::id()))
            .join(test);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn every_init_writes_the_elements_it_names() {
        assert_eq!(contents("type = \"u16\"\nlen = 3").unwrap(), [0; 6]);
        assert_eq!(
            contents("type = \"u8\"\nlen = 300\ninit = \"iota\"").unwrap()[250..260],
            [250, 251, 252, 253, 254, 255, 0, 1, 2, 3]
        );
        assert_eq!(
            contents("type = \"i16\"\nlen = 3\ninit = { fill = -2 }").unwrap(),
            [0xfe, 0xff, 0xfe, 0xff, 0xfe, 0xff]
        );
        assert_eq!(
            contents("type = \"f64\"\nlen = 2\ninit = \"iota\"").unwrap(),
            [0.0f64.to_le_bytes(), 1.0f64.to_le_bytes()].concat()
        );
        // The first SplitMix64 output from seed 7, whatever the buffer's length.
        let random = contents("type = \"u64\"\nlen = 3\ninit = { random = 7 }").unwrap();
        let mut generator = warpsim_machine::random::SplitMix64(7);
        assert_eq!(random[..8], generator.next().to_le_bytes());
        assert_eq!(random[8..16], generator.next().to_le_bytes());
        let bytes = contents("type = \"u8\"\nlen = 3\ninit = { random = 7 }").unwrap();
        assert_eq!(bytes, [random[0], random[8], random[16]]);
    }

    #[test]
    fn half_buffers_round_to_nearest_even() {
        let f16 = |init: &str| halves(&contents(&format!("type = \"f16\"\n{init}")).unwrap());
        let bf16 = |init: &str| halves(&contents(&format!("type = \"bf16\"\n{init}")).unwrap());
        // 1 + 2^-11 ties to 1.0 in f16; 1 + 2^-8 ties to 1.0 in bf16.
        assert_eq!(f16("len = 2\ninit = { fill = 1.00048828125 }"), [0x3c00; 2]);
        assert_eq!(bf16("len = 2\ninit = { fill = 1.00390625 }"), [0x3f80; 2]);
        assert_eq!(f16("len = 1\ninit = { fill = 1e6 }"), [0x7c00]);
        assert_eq!(bf16("len = 1\ninit = { fill = nan }"), [0x7fff]);
        assert_eq!(
            f16("init = [0.1, -2, 65504, 65520]"),
            [0x2e66, 0xc000, 0x7bff, 0x7c00]
        );
        assert_eq!(bf16("init = [0.1, -2, 3]"), [0x3dcd, 0xc000, 0x4040]);
        // Iota is exact up to 2048 in f16, then rounds to even: 2049 -> 2048.
        let iota = f16("len = 2051\ninit = \"iota\"");
        assert_eq!(iota[..3], [0x0000, 0x3c00, 0x4000]);
        assert_eq!(iota[2048..], [0x6800, 0x6800, 0x6801]);
        assert_eq!(bf16("len = 258\ninit = \"iota\"")[256..], [0x4380, 0x4380]);
        // Random halves are multiples of 2^-11 (f16) and 2^-8 (bf16) below 1.
        for (values, step) in [
            (f16("len = 1000\ninit = { random = 3 }"), 2048.0),
            (bf16("len = 1000\ninit = { random = 3 }"), 256.0),
        ] {
            let floats: Vec<f64> = values
                .iter()
                .map(|&bits| {
                    if step == 2048.0 {
                        f64::from(warpsim_machine::arith::f16_to_f32(bits))
                    } else {
                        f64::from(warpsim_machine::arith::bf16_to_f32(bits))
                    }
                })
                .collect();
            assert!(floats.iter().all(|&x| (0.0..1.0).contains(&x)));
            assert!(floats.iter().all(|&x| (x * step).fract() == 0.0));
            assert!(floats.iter().any(|&x| x > 0.9) && floats.iter().any(|&x| x < 0.1));
        }
    }

    #[test]
    fn inline_values_set_the_length_and_are_checked_one_by_one() {
        assert_eq!(
            contents("type = \"i32\"\ninit = [1, -2, 3.0]").unwrap(),
            [1i32, -2, 3]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<u8>>()
        );
        assert_eq!(
            contents("type = \"u8\"\nlen = 2\ninit = [255, 0]").unwrap(),
            [255, 0]
        );
        assert_eq!(
            contents("type = \"u8\"\ninit = []").unwrap(),
            Vec::<u8>::new()
        );
        assert_eq!(
            contents("type = \"f32\"\ninit = [16777217, 0.1]").unwrap(),
            [16777216f32.to_le_bytes(), 0.1f32.to_le_bytes()].concat()
        );
        let error = |buffer: &str| contents(buffer).unwrap_err().to_string();
        let message = error("type = \"u8\"\nlen = 3\ninit = [1, 2]");
        assert!(
            message.contains("`init` has 2 values, but `len` is 3"),
            "{message}"
        );
        let message = error("type = \"u8\"\ninit = [1, 256]");
        assert!(
            message.contains("`init`[1]: 256 does not fit in u8"),
            "{message}"
        );
        assert!(message.starts_with("launch.toml:8:"), "{message}");
        let message = error("type = \"i8\"\ninit = [1, 2.5]");
        assert!(
            message.contains("2.5 is not an integer, but the buffer holds i8"),
            "{message}"
        );
        let message = error("type = \"u32\"\ninit = [-1]");
        assert!(message.contains("-1 does not fit in u32"), "{message}");
        let message = error("type = \"u8\"\ninit = [inf]");
        assert!(message.contains("inf is not an integer"), "{message}");
        let message = error("type = \"u8\"\ninit = \"zero\"");
        assert!(message.contains("buffer `b` has no `len`"), "{message}");
    }

    #[test]
    fn npy_files_round_trip_through_a_dump() {
        let dir = scratch("npy_round_trip");
        for (element, values) in [
            (ElementType::F32, "[1.5, -2.0, 0.25]"),
            (ElementType::F16, "[1.5, -2.0, 0.25, 7]"),
            (ElementType::BF16, "[1.5, -2.0]"),
            (ElementType::U8, "[1, 2, 255]"),
            (ElementType::I64, "[-1, 9007199254740993]"),
        ] {
            let original =
                plan_in(&dir, &format!("type = \"{element}\"\ninit = {values}")).unwrap();
            let mut memory = warpsim_machine::GlobalMemory::new();
            let index = memory.add_words("b", original.build().unwrap());
            let path = dir.join(format!("{element}.npy"));
            let mut file = std::fs::File::create(&path).unwrap();
            crate::dump::write_buffer(
                &memory,
                index,
                element,
                crate::dump::DumpFormat::Npy,
                &mut file,
            )
            .unwrap();
            drop(file);
            let read = plan_in(
                &dir,
                &format!("type = \"{element}\"\ninit = {{ npy = \"{element}.npy\" }}"),
            )
            .unwrap();
            assert_eq!(read.len, original.len, "{element}");
            assert_eq!(built(&read), memory.contents(index), "{element}");
            // With `len` given, it must agree.
            let wrong = plan_in(
                &dir,
                &format!("type = \"{element}\"\nlen = 9\ninit = {{ npy = \"{element}.npy\" }}"),
            )
            .unwrap_err()
            .to_string();
            assert!(wrong.contains("but `len` is 9"), "{wrong}");
        }
        // A buffer of another type refuses the file, naming both types.
        let message = plan_in(&dir, "type = \"f64\"\ninit = { npy = \"f32.npy\" }")
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("holds '<f4' values, but the buffer is f64, which reads '<f8'"),
            "{message}"
        );
        // bf16 also reads the `V2` form ml_dtypes writes.
        let mut bytes = Vec::new();
        crate::npy::write_header(&mut bytes, "<V2", 2).unwrap();
        bytes.extend([0x80, 0x3f, 0x00, 0xc0]);
        std::fs::write(dir.join("v2.npy"), &bytes).unwrap();
        let plan = plan_in(&dir, "type = \"bf16\"\ninit = { npy = \"v2.npy\" }").unwrap();
        assert_eq!(halves(&built(&plan)), [0x3f80, 0xc000]);
    }

    #[test]
    fn bad_npy_files_are_refused_at_prepare() {
        let dir = scratch("bad_npy");
        let write = |name: &str, descr: &str, order: &str, shape: &str, data: usize| {
            let header =
                format!("{{'descr': '{descr}', 'fortran_order': {order}, 'shape': {shape}, }}\n");
            let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
            bytes.extend((header.len() as u16).to_le_bytes());
            bytes.extend(header.as_bytes());
            bytes.extend(vec![0u8; data]);
            std::fs::write(dir.join(name), bytes).unwrap();
        };
        write("big_endian.npy", ">f4", "False", "(2,)", 8);
        write("fortran.npy", "<f4", "True", "(2, 2)", 16);
        write("fortran_vector.npy", "<f4", "True", "(1, 2)", 8);
        write("short.npy", "<f4", "False", "(2,)", 7);
        write("matrix.npy", "<f4", "False", "(2, 3)", 24);
        let message = |file: &str| match plan_in(
            &dir,
            &format!("type = \"f32\"\ninit = {{ npy = \"{file}\" }}"),
        ) {
            Ok(plan) => format!("ok: {} elements", plan.len),
            Err(error) => error.to_string(),
        };
        assert!(
            message("big_endian.npy").contains("big-endian"),
            "{}",
            message("big_endian.npy")
        );
        assert!(
            message("fortran.npy").contains("Fortran"),
            "{}",
            message("fortran.npy")
        );
        assert_eq!(message("fortran_vector.npy"), "ok: 2 elements");
        assert_eq!(message("matrix.npy"), "ok: 6 elements");
        assert!(
            message("short.npy")
                .contains("has 75 bytes, but its 68-byte header and 2 elements of f32 take 76"),
            "{}",
            message("short.npy")
        );
        assert!(
            message("nosuch.npy").contains("cannot read"),
            "{}",
            message("nosuch.npy")
        );
    }

    #[test]
    fn input_files_must_be_regular_files() {
        let dir = scratch("not_regular");
        let message = plan_in(&dir, "type = \"u8\"\nlen = 4\ninit = { file = \".\" }")
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("is a directory; an input file must be a regular file"),
            "{message}"
        );
        if Path::new("/dev/zero").exists() {
            for form in ["file", "npy"] {
                let message = plan_in(
                    &dir,
                    &format!("type = \"u8\"\nlen = 4\ninit = {{ {form} = \"/dev/zero\" }}"),
                )
                .unwrap_err()
                .to_string();
                assert!(
                    message.contains("/dev/zero is a character device"),
                    "{message}"
                );
            }
        }
    }

    #[test]
    fn a_file_changed_after_prepare_is_an_error_when_built() {
        let dir = scratch("changed");
        std::fs::write(dir.join("four.bin"), [1, 2, 3, 4]).unwrap();
        let plan = plan_in(
            &dir,
            "type = \"u8\"\nlen = 4\ninit = { file = \"four.bin\" }",
        )
        .unwrap();
        assert_eq!(built(&plan), [1, 2, 3, 4]);
        std::fs::write(dir.join("four.bin"), [1, 2, 3]).unwrap();
        let error = plan.build().unwrap_err();
        assert_eq!(error.buffer, "b");
        assert!(
            error
                .message
                .contains("has changed since the launch was prepared"),
            "{error}"
        );
    }

    #[test]
    fn buffers_larger_than_the_host_memory_are_refused_by_name() {
        let file = TomlFile::new(
            Path::new("launch.toml"),
            "[buffers.a]\ntype = \"f32\"\nlen = 1000\n[buffers.b]\ntype = \"u8\"\nlen = 3\n"
                .to_string(),
        );
        let launch: IndexMap<String, IndexMap<String, BufferSpec>> = file.parse().unwrap();
        let plans: Vec<BufferPlan> = launch["buffers"]
            .iter()
            .map(|(name, spec)| plan_buffer(name, spec, Path::new("."), &file).unwrap())
            .collect();
        let host = |available| HostMemory {
            available,
            source: "a test",
        };
        // 4000 bytes and 3 bytes, the latter stored in one 8-byte word.
        assert!(check_host_memory(&plans, &file, Some(&host(4008))).is_ok());
        assert!(check_host_memory(&plans, &file, None).is_ok());
        let error = check_host_memory(&plans, &file, Some(&host(4007))).unwrap_err();
        let InputError::Located { summary, rendered } = &error else {
            panic!("{error:?}");
        };
        assert_eq!(
            summary,
            "launch.toml:3:1: the 2 buffers take 3.9 KiB (4008 bytes), more than the 3.9 KiB of memory this host has available (a test)"
        );
        assert!(rendered.contains("`a`: 3.9 KiB"), "{rendered}");
        assert!(rendered.contains("`b`: 8 bytes"), "{rendered}");
        assert!(
            rendered.contains("warpsim holds every buffer in host memory"),
            "{rendered}"
        );
    }

    #[test]
    fn sizes_are_written_for_people() {
        assert_eq!(human_bytes(1023), "1023 bytes");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(2 << 30), "2.0 GiB");
        assert_eq!(human_bytes(u64::MAX), "16384.0 PiB");
    }

    #[test]
    fn integer_fills_take_the_whole_range_of_their_type() {
        let u64_fill = contents("type = \"u64\"\nlen = 1\ninit = { fill = 1e19 }").unwrap();
        assert_eq!(u64_fill, 10_000_000_000_000_000_000u64.to_le_bytes());
        let i8_fill = contents("type = \"i8\"\nlen = 1\ninit = { fill = -128 }").unwrap();
        assert_eq!(i8_fill, [0x80]);
        // 2^64 and 2^63 are one past the largest u64 and i64.
        for (ty, value) in [
            ("u64", "18446744073709551616"),
            ("i64", "9223372036854775808"),
            ("u8", "256"),
            ("i8", "128"),
        ] {
            let error = contents(&format!(
                "type = \"{ty}\"\nlen = 1\ninit = {{ fill = {value}.0 }}"
            ))
            .unwrap_err();
            assert!(error.to_string().contains("does not fit"), "{ty}: {error}");
        }
    }

    #[test]
    fn half_parameters_round_to_nearest_even() {
        let half = |value: f64| scalar_bits(ScalarType::F16, 0, Some(value)).unwrap();
        assert_eq!(half(1.0), 0x3c00);
        assert_eq!(half(-2.5), 0xc100);
        assert_eq!(half(65504.0), 0x7bff);
        assert_eq!(half(-0.0), 0x8000);
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: even (1.0) wins;
        // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 and 1 + 2^-9: even wins.
        assert_eq!(half(1.0 + 2f64.powi(-11)), 0x3c00);
        assert_eq!(half(1.0 + 3.0 * 2f64.powi(-11)), 0x3c02);
        // Just above halfway rounds up.
        assert_eq!(half(1.0 + 2f64.powi(-11) + 2f64.powi(-30)), 0x3c01);
        // 0.1 is 0x2e66 (0.0999755859375), the nearest half.
        assert_eq!(half(0.1), 0x2e66);
        // Past 65520 (halfway to the next power of two): infinity.
        assert_eq!(half(65519.0), 0x7bff);
        assert_eq!(half(65520.0), 0x7c00);
        // The smallest subnormal is 2^-24; half of it ties to zero.
        assert_eq!(half(2f64.powi(-24)), 0x0001);
        assert_eq!(half(2f64.powi(-25)), 0x0000);
        assert_eq!(half(3.0 * 2f64.powi(-25)), 0x0002);
        // An integer argument converts the same way.
        assert_eq!(scalar_bits(ScalarType::F16, 3, None).unwrap(), 0x4200);
        assert_eq!(scalar_bits(ScalarType::F16, 2049, None).unwrap(), 0x6800);
    }

    #[test]
    fn half_pairs_are_refused() {
        for ty in [ScalarType::F16x2, ScalarType::Bf16x2] {
            for float in [Some(1.0), None] {
                let message = scalar_bits(ty, 1, float).unwrap_err();
                assert!(message.contains(&format!(".{ty} ")), "{message}");
                assert!(message.contains(".b32"), "{message}");
            }
        }
    }

    /// A `.bf16` parameter is the number rounded once to the nearest
    /// bfloat16, ties to even, not an `f64`'s bits.
    #[test]
    fn bfloat16_parameters_round_to_nearest_even() {
        let bfloat = |value: f64| scalar_bits(ScalarType::Bf16, 0, Some(value)).unwrap();
        assert_eq!(bfloat(1.0), 0x3f80);
        assert_eq!(bfloat(-2.5), 0xc020);
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: even (1.0) wins.
        assert_eq!(bfloat(1.0 + 2f64.powi(-8)), 0x3f80);
        assert_eq!(bfloat(1.0 + 3.0 * 2f64.powi(-8)), 0x3f82);
        assert_eq!(bfloat(1e39), 0x7f80);
        assert_eq!(scalar_bits(ScalarType::Bf16, 257, None).unwrap(), 0x4380);
    }

    #[test]
    fn other_floats_keep_their_conversions() {
        assert_eq!(
            scalar_bits(ScalarType::F32, 0, Some(0.1)).unwrap(),
            u64::from(0.1f32.to_bits())
        );
        assert_eq!(
            scalar_bits(ScalarType::F64, 0, Some(0.1)).unwrap(),
            0.1f64.to_bits()
        );
    }
}
