//! Builds the launch's global buffers from their launch-file specifications,
//! and the kernel's parameter buffer from its arguments.

use std::path::Path;

use indexmap::IndexMap;
use warpsim_ir::{ScalarType, TypeKind};
use warpsim_machine::memory::{buffer_base, MAX_BUFFER_BYTES};

/// The largest buffer a launch file may ask for: well inside the simulated
/// address map, and small enough to allocate on an ordinary host.
const MAX_HOST_BUFFER_BYTES: u64 = if MAX_BUFFER_BYTES < 1 << 32 {
    MAX_BUFFER_BYTES
} else {
    1 << 32
};
use warpsim_machine::program::ParamSlot;

use crate::error::InputError;
use crate::launch_file::{
    Argument, BufferSpec, ElementType, FieldType, FieldValue, Init, NamedInit, StructField,
    TableInit,
};
use crate::toml_file::TomlFile;

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014): tiny, and the same sequence on every host.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Encodes element `index`'s value `value` (already the right kind) into bytes.
fn push_element(bytes: &mut Vec<u8>, element: ElementType, value: Element) {
    let size = element.size() as usize;
    let bits: u64 = match (element, value) {
        (ElementType::F32, Element::Float(x)) => u64::from((x as f32).to_bits()),
        (ElementType::F64, Element::Float(x)) => x.to_bits(),
        (ElementType::F32, Element::Int(x)) => u64::from((x as f32).to_bits()),
        (ElementType::F64, Element::Int(x)) => (x as f64).to_bits(),
        (_, Element::Int(x)) => x as u64,
        (_, Element::Float(x)) => x as i64 as u64,
        (_, Element::Bits(bits)) => bits,
    };
    bytes.extend_from_slice(&bits.to_le_bytes()[..size]);
}

#[derive(Clone, Copy)]
enum Element {
    Int(i64),
    Float(f64),
    Bits(u64),
}

/// The initial bytes of buffer `name`; errors point at its keys in `launch`.
pub fn initial_contents(
    name: &str,
    spec: &BufferSpec,
    base_dir: &Path,
    launch: &TomlFile,
) -> Result<Vec<u8>, InputError> {
    let error = |key: &str, message: String, label: String| -> InputError {
        launch
            .error(format!("buffer `{name}`: {message}"))
            .at(&["buffers", name, key], label)
            .into_error()
    };
    let bytes_len = spec
        .len
        .checked_mul(spec.element.size())
        .filter(|&bytes| bytes <= MAX_HOST_BUFFER_BYTES)
        .ok_or_else(|| {
            error(
                "len",
                format!(
                    "{} elements is more than the {} GiB a buffer may hold",
                    spec.len,
                    MAX_HOST_BUFFER_BYTES >> 30
                ),
                format!(
                    "at most {} elements of {}",
                    MAX_HOST_BUFFER_BYTES / spec.element.size(),
                    spec.element
                ),
            )
        })?;
    if let Init::Table(TableInit::File(file)) = &spec.init {
        let path = base_dir.join(file);
        let bytes = std::fs::read(&path).map_err(|io| {
            error(
                "init",
                format!("cannot read {}: {io}", path.display()),
                String::new(),
            )
        })?;
        if bytes.len() as u64 != bytes_len {
            return Err(error(
                "init",
                format!(
                    "{} has {} bytes, but {} elements of {} take {bytes_len}",
                    path.display(),
                    bytes.len(),
                    spec.len,
                    spec.element
                ),
                format!("{} bytes", bytes.len()),
            ));
        }
        return Ok(bytes);
    }
    let mut bytes = Vec::with_capacity(bytes_len as usize);
    let mut random = SplitMix64(match spec.init {
        Init::Table(TableInit::Random(seed)) => seed,
        _ => 0,
    });
    let size_bits = spec.element.size() * 8;
    if let Init::Table(TableInit::Fill(value)) = &spec.init {
        // Integer buffers take integers that fit (checked only when there
        // is an element to fill).
        if spec.len > 0 && !spec.element.is_float() {
            if value.fract() != 0.0 {
                return Err(error(
                    "init",
                    format!(
                        "fill value {value} is not an integer, but the buffer holds {}",
                        spec.element
                    ),
                    String::new(),
                ));
            }
            // The range is [min, end): the end, a power of two, is exact as
            // an f64, where `end - 1` would round back up to it for 64 bits.
            let bits = size_bits as i32;
            let (min, end) = if spec.element.is_signed() {
                (-(2f64.powi(bits - 1)), 2f64.powi(bits - 1))
            } else {
                (0.0, 2f64.powi(bits))
            };
            if *value < min || *value >= end {
                return Err(error(
                    "init",
                    format!("fill value {value} does not fit in {}", spec.element),
                    String::new(),
                ));
            }
        }
    }
    for index in 0..spec.len {
        let value = match &spec.init {
            Init::Zero | Init::Named(NamedInit::Zero) => Element::Bits(0),
            Init::Named(NamedInit::Iota) => Element::Int(index as i64),
            Init::Table(TableInit::Fill(value)) => {
                if spec.element.is_float() {
                    Element::Float(*value)
                } else if spec.element.is_signed() {
                    Element::Int(*value as i64)
                } else {
                    // Unsigned values up to 2^64 - 1 do not fit an i64.
                    Element::Bits(*value as u64)
                }
            }
            Init::Table(TableInit::Random(_)) => {
                let bits = random.next();
                if spec.element.is_float() {
                    // The top 53 bits give a double uniform in [0, 1).
                    Element::Float((bits >> 11) as f64 / (1u64 << 53) as f64)
                } else {
                    Element::Bits(bits & (u64::MAX >> (64 - size_bits)))
                }
            }
            Init::Table(TableInit::File(_)) => Element::Bits(0),
        };
        push_element(&mut bytes, spec.element, value);
    }
    Ok(bytes)
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
) -> Result<Vec<u8>, InputError> {
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
            let laid_out = struct_bytes(fields, param.size as u64, buffers).map_err(|message| {
                error(message, format!("`{}` is {} bytes", param.name, param.size))
            })?;
            bytes[offset..offset + laid_out.len()].copy_from_slice(&laid_out);
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
                buffer_address(buffers, name).ok_or_else(|| {
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
                })?
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
    Ok(bytes)
}

/// The global address of the buffer named `name`.
fn buffer_address(buffers: &IndexMap<String, BufferSpec>, name: &str) -> Option<u64> {
    buffers.get_index_of(name).map(buffer_base)
}

/// The PTX type of a buffer or field element, whose range a value must fit.
fn element_scalar_type(element: ElementType) -> ScalarType {
    match element {
        ElementType::U8 => ScalarType::U8,
        ElementType::U16 => ScalarType::U16,
        ElementType::U32 => ScalarType::U32,
        ElementType::U64 => ScalarType::U64,
        ElementType::I8 => ScalarType::S8,
        ElementType::I16 => ScalarType::S16,
        ElementType::I32 => ScalarType::S32,
        ElementType::I64 => ScalarType::S64,
        ElementType::F32 => ScalarType::F32,
        ElementType::F64 => ScalarType::F64,
    }
}

/// The bytes of a struct passed by value (`size` bytes): each field at its
/// offset (C's: the next multiple of its size, unless given), the rest zero.
fn struct_bytes(
    fields: &[StructField],
    size: u64,
    buffers: &IndexMap<String, BufferSpec>,
) -> Result<Vec<u8>, String> {
    let mut bytes = vec![0u8; size as usize];
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
            let bits = match (field.ty, value) {
                (FieldType::Pointer, FieldValue::Buffer(buffer)) => buffer_address(buffers, buffer)
                    .ok_or_else(|| format!("{name}: no buffer named `{buffer}` in [buffers]"))?,
                (FieldType::Pointer, FieldValue::Integer(address)) => *address as u64,
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
                    scalar_bits(element_scalar_type(element), i128::from(*value), None)
                        .map_err(|message| format!("{name}: {message}"))?
                }
                (FieldType::Element(element), FieldValue::Float(value)) => {
                    let ty = element_scalar_type(element);
                    if !ty.is_float() {
                        return Err(format!("{name}: {value} is not an integer"));
                    }
                    scalar_bits(ty, 0, Some(*value))
                        .map_err(|message| format!("{name}: {message}"))?
                }
            };
            let at = (start + index as u64 * element) as usize;
            bytes[at..at + element as usize]
                .copy_from_slice(&bits.to_le_bytes()[..element as usize]);
        }
    }
    Ok(bytes)
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
                ScalarType::F16x2 => {
                    return Err(
                        "a .f16x2 parameter holds two halves and cannot be given as one number; \
                         declare it .b32 and pass the bits of the pair as an integer \
                         (element 0 in the low 16 bits)"
                            .to_string(),
                    )
                }
                _ => value.to_bits(),
            })
        }
        TypeKind::Predicate => Err("a parameter cannot be a predicate".to_string()),
        kind => {
            let bits = ty.bits();
            let (min, max) = if kind == TypeKind::Signed {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else if kind == TypeKind::Unsigned {
                (0, (1i128 << bits) - 1)
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

    /// The contents of buffer `b` of a launch file whose buffer section is `buffer`.
    fn contents(buffer: &str) -> Result<Vec<u8>, InputError> {
        let text = format!(
            "source = \"k.kir\"\nkernel = \"k\"\ngrid = [1]\nblock = [1]\nargs = []\n[buffers.b]\n{buffer}\n"
        );
        let file = TomlFile::new(Path::new("launch.toml"), text);
        let launch: crate::LaunchFile = file.parse()?;
        initial_contents("b", &launch.buffers["b"], Path::new("."), &file)
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
        for float in [Some(1.0), None] {
            let message = scalar_bits(ScalarType::F16x2, 1, float).unwrap_err();
            assert!(message.contains(".f16x2"), "{message}");
            assert!(message.contains(".b32"), "{message}");
        }
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
