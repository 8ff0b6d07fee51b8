//! Launch files written for the user: `warpsim init FILE.cu` writes one
//! per kernel, commented, with a buffer for every pointer parameter
//! (named after it, typed from its CUDA type) and a value for every
//! scalar; `warpsim run FILE --kernel K --arg ...` builds one from the
//! command line. Both go through the same launch-file reader afterwards,
//! so one set of rules (and of error messages) holds for every launch.

use std::fmt::Write;

use crate::cuda_source::{CudaParam, CudaStruct, KernelSignature};

/// The launch-file element type (`f32`) for a CUDA scalar type (`float`),
/// and how many of them one value holds (`float4` holds four).
pub fn element_type(cuda_type: &str) -> Option<(&'static str, u64)> {
    let normalized = cuda_type.replace("std::", "").replace("signed int", "int");
    Some(match normalized.trim() {
        "float" => ("f32", 1),
        "float2" => ("f32", 2),
        "float3" => ("f32", 3),
        "float4" => ("f32", 4),
        "double" => ("f64", 1),
        "double2" => ("f64", 2),
        "int" | "signed" | "int32_t" => ("i32", 1),
        "int2" => ("i32", 2),
        "int4" => ("i32", 4),
        "unsigned" | "unsigned int" | "uint32_t" | "uint" => ("u32", 1),
        "uint2" => ("u32", 2),
        "uint4" => ("u32", 4),
        "short" | "short int" | "int16_t" => ("i16", 1),
        "unsigned short" | "uint16_t" | "ushort" => ("u16", 1),
        "char" | "signed char" | "int8_t" => ("i8", 1),
        "unsigned char" | "uint8_t" | "uchar" | "bool" => ("u8", 1),
        "long" | "long int" | "long long" | "long long int" | "int64_t" | "ptrdiff_t" => ("i64", 1),
        "unsigned long"
        | "unsigned long long"
        | "unsigned long long int"
        | "uint64_t"
        | "size_t" => ("u64", 1),
        "half" | "__half" => ("f16", 1),
        "half2" | "__half2" => ("f16", 2),
        "__nv_bfloat16" | "nv_bfloat16" => ("bf16", 1),
        "__nv_bfloat162" | "nv_bfloat162" => ("bf16", 2),
        _ => return None,
    })
}

/// `T` replaced by its argument in `cuda_type`, for a template kernel
/// (`template <typename T>` instantiated with `float`).
fn substitute(cuda_type: &str, kernel: &KernelSignature) -> String {
    let (Some(parameters), Some(arguments)) = (&kernel.template, &kernel.instantiation) else {
        return cuda_type.to_string();
    };
    let mut result = cuda_type.to_string();
    for (parameter, argument) in parameters.split(',').zip(arguments.split(',')) {
        let Some(name) = parameter.split_whitespace().last() else {
            continue;
        };
        let replaced: Vec<String> = result
            .split_inclusive(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map(|piece| {
                let word_end = piece
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(piece.len());
                if &piece[..word_end] == name {
                    format!("{}{}", argument.trim(), &piece[word_end..])
                } else {
                    piece.to_string()
                }
            })
            .collect();
        result = replaced.concat();
    }
    result
}

/// A TOML string.
fn quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// What one parameter becomes in a launch file.
enum Value {
    /// A scalar, as TOML.
    Scalar(String),
    /// A buffer: its table's lines after `[buffers."name"]`.
    Buffer(String),
    /// A struct's fields, as TOML.
    Struct(String),
}

/// A parameter's buffer name: the CUDA name, else `argN`.
fn buffer_name(param: &CudaParam, position: usize) -> String {
    if param.name.is_empty() {
        format!("arg{}", position + 1)
    } else {
        param.name.clone()
    }
}

/// The value `init` proposes for `param` of a launch of `threads` threads,
/// with a comment saying what it is.
fn proposed_value(
    param: &CudaParam,
    kernel: &KernelSignature,
    structs: &[CudaStruct],
    threads: u64,
) -> (Value, String) {
    let ty = substitute(&param.ty, kernel);
    let written = format!("{} {}", ty.trim(), param.name);
    let base = CudaParam {
        ty: ty.clone(),
        name: param.name.clone(),
    }
    .base_type();
    if param.is_pointer() {
        let (element, per_value) = element_type(&base).unwrap_or(("u8", 4));
        let input = param.points_to_const();
        let mut table = format!("type = {}\n", quoted(element));
        let _ = writeln!(
            table,
            "len = {}                 # one {} per thread of the grid; adjust",
            threads * per_value,
            if per_value == 1 { "element" } else { "value" }
        );
        let _ = writeln!(
            table,
            "init = {}",
            if input {
                "\"iota\"    # read by the kernel: 0, 1, 2, ...; or { random = 1 }, { file = \"x.bin\" }, { npy = \"x.npy\" }"
            } else {
                "\"zero\""
            }
        );
        let comment = if element_type(&base).is_some() {
            format!("{written}: {}", if input { "input" } else { "output" })
        } else {
            format!("{written}: `{base}` has no element type here; bytes, 4 per thread")
        };
        return (Value::Buffer(table), comment);
    }
    if let Some(definition) = structs.iter().find(|s| s.name == base) {
        let fields: Vec<String> = definition
            .fields
            .iter()
            .map(|(field_type, name, count)| {
                let value = if field_type.contains('*') {
                    "ptr = 0".to_string()
                } else {
                    match element_type(field_type) {
                        Some((element, _)) if *count > 1 => {
                            let zero = if element.starts_with('f') { "0.0" } else { "0" };
                            format!("{element} = [{}]", vec![zero; *count as usize].join(", "))
                        }
                        Some((element, _)) if element.starts_with('f') => {
                            format!("{element} = 0.0")
                        }
                        Some((element, _)) => format!("{element} = 0"),
                        None => format!("u8 = 0  # {field_type} {name}: no element type"),
                    }
                };
                format!("{{ {value} }}")
            })
            .collect();
        let names: Vec<&str> = definition
            .fields
            .iter()
            .map(|(_, name, _)| name.as_str())
            .collect();
        return (
            Value::Struct(format!("[{}]", fields.join(", "))),
            format!("{written}: a struct by value, fields {}", names.join(", ")),
        );
    }
    match element_type(&base) {
        Some((element, _)) if element.starts_with('f') || element == "bf16" => {
            (Value::Scalar("1.0".to_string()), written)
        }
        Some(_) => (Value::Scalar(threads.to_string()), format!("{written}: the thread count here; adjust")),
        None => (
            Value::Scalar("0".to_string()),
            format!("{written}: a `{base}` by value; give its fields, e.g. [{{ i32 = 1 }}, {{ f32 = 2.0 }}]"),
        ),
    }
}

/// The launch file `warpsim init` writes for `kernel` of `source` (its path
/// relative to the launch file).
pub fn template(source: &str, kernel: &KernelSignature, structs: &[CudaStruct]) -> String {
    let (grid, block) = (1u64, 256u64);
    let threads = grid * block;
    let name = match (&kernel.template, &kernel.instantiation) {
        (Some(_), Some(arguments)) => format!("{}<{arguments}>", kernel.name),
        (Some(_), None) => format!("{}<float>", kernel.name),
        _ => kernel.name.clone(),
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Launch file for kernel `{}` of {source}, written by `warpsim init`.",
        kernel.name
    );
    let _ = writeln!(
        out,
        "# Run it with `warpsim run FILE.toml`; every field is described in README.md."
    );
    let _ = writeln!(out, "source = {}", quoted(source));
    if kernel.template.is_some() && kernel.instantiation.is_none() {
        let _ = writeln!(out, "# A template: name the instantiation to run.");
    }
    let _ = writeln!(out, "kernel = {}", quoted(&name));
    let _ = writeln!(out, "grid = [{grid}]                 # blocks: x, y, z");
    let _ = writeln!(
        out,
        "block = [{block}]              # threads per block: x, y, z"
    );
    let _ = writeln!(
        out,
        "shared_bytes = 0             # dynamic shared memory per block"
    );
    let _ = writeln!(
        out,
        "# One argument per parameter, in order: a string names a buffer below,"
    );
    let _ = writeln!(
        out,
        "# a number is a scalar, an array of {{ TYPE = VALUE }} is a struct."
    );
    let mut buffers = String::new();
    if kernel.params.is_empty() {
        let _ = writeln!(out, "args = []");
    } else {
        let _ = writeln!(out, "args = [");
        for (position, param) in kernel.params.iter().enumerate() {
            let (value, comment) = proposed_value(param, kernel, structs, threads);
            let argument = match value {
                Value::Scalar(text) | Value::Struct(text) => text,
                Value::Buffer(table) => {
                    let name = buffer_name(param, position);
                    let _ = write!(
                        buffers,
                        "\n[buffers.{}]     # {comment}\n{table}",
                        quoted(&name)
                    );
                    quoted(&name)
                }
            };
            let _ = writeln!(out, "    {argument},    # {comment}");
        }
        let _ = writeln!(out, "]");
    }
    out.push_str(&buffers);
    out
}

/// A launch from the command line: the source (its path from the working
/// directory), the kernel, the shape, and `--arg`s in parameter order.
pub struct CommandLineLaunch<'a> {
    pub source: &'a str,
    pub kernel: &'a str,
    pub grid: &'a [u32],
    pub block: &'a [u32],
    pub shared_bytes: u32,
    /// The kernel's parameters as the source declares them, when known (a
    /// `.cu` source); else each needs its `--arg`.
    pub params: Option<(&'a KernelSignature, &'a [CudaStruct])>,
    /// The parameters' names in the PTX or IR, for a source whose
    /// declarations are not known.
    pub param_names: &'a [String],
    pub args: &'a [String],
}

/// The launch file for a command-line launch, or why the arguments do not
/// make one. An `--arg` is a number (a scalar), `TYPE[LEN]` or
/// `TYPE[LEN]=INIT` (a buffer; INIT is `zero`, `iota`, `random`,
/// `random:SEED`, a number to fill with, `file:PATH` or `npy:PATH`), or the
/// TOML of a struct's fields; `NAME=VALUE` gives parameter `NAME` its value,
/// the others fill the parameters left in order. For a `.cu` kernel, whose
/// pointer parameters are known, buffers go to the pointers left in order
/// and numbers and structs to the other parameters left in order (so
/// `--arg 2` is `factor` of `scale(float* data, float factor)`), and a
/// pointer parameter without an `--arg` gets the buffer `init` would propose.
pub fn from_command_line(launch: &CommandLineLaunch) -> Result<String, String> {
    let dims = |values: &[u32]| {
        values
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let threads: u64 = launch
        .grid
        .iter()
        .chain(launch.block)
        .map(|&d| u64::from(d))
        .product();
    let names: Vec<String> = match launch.params {
        Some((kernel, _)) => kernel
            .params
            .iter()
            .enumerate()
            .map(|(position, param)| buffer_name(param, position))
            .collect(),
        None => launch.param_names.to_vec(),
    };
    let count = names.len();
    // Named arguments first, then the others in order into what is left.
    let mut given: Vec<Option<&str>> = vec![None; count];
    let mut positional = Vec::new();
    for arg in launch.args {
        let named = arg.split_once('=').and_then(|(name, value)| {
            let position = names.iter().position(|known| known == name.trim())?;
            Some((position, value))
        });
        match named {
            Some((position, value)) => {
                if given[position].replace(value).is_some() {
                    return Err(format!("parameter `{}` is given twice", names[position]));
                }
            }
            None => positional.push(arg.as_str()),
        }
    }
    let is_pointer: Option<Vec<bool>> = launch
        .params
        .map(|(kernel, _)| kernel.params.iter().map(CudaParam::is_pointer).collect());
    for arg in positional {
        let is_buffer = !(arg.trim().starts_with('[') || is_number(arg.trim()));
        let open = (0..count).find(|&position| {
            given[position].is_none()
                && is_pointer
                    .as_ref()
                    .is_none_or(|is_pointer| is_pointer[position] == is_buffer)
        });
        let Some(position) = open else {
            let what = match &is_pointer {
                None => "",
                Some(_) if is_buffer => " pointer",
                Some(_) => " non-pointer",
            };
            return Err(format!(
                "kernel `{}` has no{what} parameter left for --arg `{arg}`",
                launch.kernel
            ));
        };
        given[position] = Some(arg);
    }
    let mut out = String::new();
    let _ = writeln!(out, "source = {}", quoted(launch.source));
    let _ = writeln!(out, "kernel = {}", quoted(launch.kernel));
    let _ = writeln!(out, "grid = [{}]", dims(launch.grid));
    let _ = writeln!(out, "block = [{}]", dims(launch.block));
    let _ = writeln!(out, "shared_bytes = {}", launch.shared_bytes);
    let mut arguments = Vec::new();
    let mut buffers = String::new();
    for (position, name) in names.iter().enumerate() {
        let param = launch
            .params
            .and_then(|(kernel, _)| kernel.params.get(position));
        match given[position] {
            Some(arg) => {
                let (argument, table) = command_line_argument(arg, name).map_err(|message| {
                    format!("parameter {} (`{name}`): {message}", position + 1)
                })?;
                if let Some(table) = table {
                    let _ = write!(buffers, "\n[buffers.{}]\n{table}", quoted(name));
                }
                arguments.push(argument);
            }
            None => match (param, launch.params) {
                (Some(param), Some((kernel, structs))) if param.is_pointer() => {
                    let (value, _) = proposed_value(param, kernel, structs, threads);
                    if let Value::Buffer(table) = value {
                        let _ = write!(buffers, "\n[buffers.{}]\n{table}", quoted(name));
                    }
                    arguments.push(quoted(name));
                }
                _ => {
                    let what =
                        param.map_or(String::new(), |param| format!(" ({})", param.ty.trim()));
                    return Err(format!(
                        "kernel `{}` takes {count} parameters; give an --arg for parameter {} `{name}`{what}",
                        launch.kernel,
                        position + 1
                    ));
                }
            },
        }
    }
    let _ = writeln!(out, "args = [{}]", arguments.join(", "));
    out.push_str(&buffers);
    Ok(out)
}

/// Whether an `--arg` is a number (a scalar's value).
fn is_number(arg: &str) -> bool {
    arg.parse::<i64>().is_ok() || arg.parse::<f64>().is_ok()
}

/// One `--arg`: the TOML of the argument, and of its buffer's table when it
/// makes one (named `name`).
fn command_line_argument(arg: &str, name: &str) -> Result<(String, Option<String>), String> {
    let arg = arg.trim();
    if arg.starts_with('[') {
        // A struct's fields, as a launch file writes them.
        return Ok((arg.to_string(), None));
    }
    if is_number(arg) {
        return Ok((arg.to_string(), None));
    }
    let (declaration, init) = match arg.split_once('=') {
        Some((declaration, init)) => (declaration.trim(), Some(init.trim())),
        None => (arg, None),
    };
    let (element, len) = declaration
        .strip_suffix(']')
        .and_then(|rest| rest.split_once('['))
        .ok_or_else(|| {
            "expected a number, TYPE[LEN] or TYPE[LEN]=INIT (f32[1024]=iota), or a struct's fields"
                .to_string()
        })?;
    if element.is_empty() || !element.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(format!(
            "`{element}` is not an element type such as f32 or i32"
        ));
    }
    let mut table = format!("type = {}\n", quoted(element));
    let len = len.trim();
    if !len.is_empty() {
        let len: u64 = len
            .parse()
            .map_err(|_| format!("`{len}` is not a length"))?;
        let _ = writeln!(table, "len = {len}");
    }
    let init = match init {
        None | Some("zero") => "\"zero\"".to_string(),
        Some("iota") => "\"iota\"".to_string(),
        Some("random") => "{ random = 0 }".to_string(),
        Some(init) => {
            if let Some(seed) = init.strip_prefix("random:") {
                let seed: u64 = seed
                    .parse()
                    .map_err(|_| format!("`{seed}` is not a seed"))?;
                format!("{{ random = {seed} }}")
            } else if let Some(path) = init.strip_prefix("file:") {
                format!("{{ file = {} }}", quoted(path))
            } else if let Some(path) = init.strip_prefix("npy:") {
                format!("{{ npy = {} }}", quoted(path))
            } else if init.parse::<f64>().is_ok() {
                format!("{{ fill = {init} }}")
            } else {
                return Err(format!(
                    "`{init}` is not an initial value: zero, iota, random, random:SEED, a number, file:PATH or npy:PATH"
                ));
            }
        }
    };
    let _ = writeln!(table, "init = {init}");
    Ok((quoted(name), Some(table)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda_source::{kernels, structs};

    const SOURCE: &str = "struct P { float a; int b[2]; const int* c; };\n\
        extern \"C\" __global__ void k(const float* in, float* out, int n, float s, P p) {}\n\
        template <typename T> __global__ void t(T* x, unsigned n) {}\n\
        template __global__ void t<double>(double*, unsigned);\n";

    #[test]
    fn templates_propose_buffers_scalars_and_struct_fields() {
        let found = kernels(SOURCE);
        let text = template("k.cu", &found[0], &structs(SOURCE));
        let launch: crate::LaunchFile = toml::from_str(&text).expect("the template parses");
        assert_eq!(launch.kernel, "k");
        assert_eq!(launch.args.len(), 5);
        assert_eq!(launch.buffers.len(), 2);
        assert_eq!(launch.buffers["in"].len, Some(256));
        assert!(
            text.contains("{ f32 = 0.0 }, { i32 = [0, 0] }, { ptr = 0 }"),
            "{text}"
        );
        let templated = template("k.cu", &found[1], &[]);
        let launch: crate::LaunchFile = toml::from_str(&templated).expect("the template parses");
        assert_eq!(launch.kernel, "t<double>");
        assert_eq!(launch.buffers["x"].element.to_string(), "f64");
    }

    #[test]
    fn command_line_arguments_become_a_launch_file() {
        let found = kernels(SOURCE);
        let structs = structs(SOURCE);
        let args = [
            "f32[64]=iota".to_string(),
            "f32[64]".to_string(),
            "-5".to_string(),
            "2.5".to_string(),
            "[{ f32 = 1.0 }]".to_string(),
        ];
        let text = from_command_line(&CommandLineLaunch {
            source: "k.cu",
            kernel: "k",
            grid: &[2],
            block: &[32],
            shared_bytes: 0,
            params: Some((&found[0], &structs)),
            param_names: &[],
            args: &args,
        })
        .unwrap();
        let launch: crate::LaunchFile = toml::from_str(&text).expect("it parses");
        assert_eq!(launch.grid, [2]);
        assert_eq!(launch.buffers["in"].len, Some(64));
        assert_eq!(launch.buffers.len(), 2);
        // Left out: a pointer gets the proposed buffer; a scalar is an error.
        let text = from_command_line(&CommandLineLaunch {
            source: "k.cu",
            kernel: "k",
            grid: &[2],
            block: &[32],
            shared_bytes: 0,
            params: Some((&found[0], &structs)),
            param_names: &[],
            args: &[],
        });
        assert_eq!(
            text.unwrap_err(),
            "kernel `k` takes 5 parameters; give an --arg for parameter 3 `n` (int)"
        );
        // By name: the pointers left out get their buffers.
        let named = [
            "n=7".to_string(),
            "s=0.5".to_string(),
            "p=[{ f32 = 1.0 }]".to_string(),
        ];
        let text = from_command_line(&CommandLineLaunch {
            source: "k.cu",
            kernel: "k",
            grid: &[1],
            block: &[8],
            shared_bytes: 0,
            params: Some((&found[0], &structs)),
            param_names: &[],
            args: &named,
        })
        .unwrap();
        let launch: crate::LaunchFile = toml::from_str(&text).expect("it parses");
        assert_eq!(launch.args[2], crate::launch_file::Argument::Integer(7));
        assert_eq!(launch.buffers["out"].len, Some(8));
        // In order: numbers and structs to the scalars and structs, buffers
        // to the pointers, the pointers left out getting their buffers.
        let positional = [
            "7".to_string(),
            "f32[4]=iota".to_string(),
            "0.5".to_string(),
            "[{ f32 = 1.0 }]".to_string(),
        ];
        let text = from_command_line(&CommandLineLaunch {
            source: "k.cu",
            kernel: "k",
            grid: &[1],
            block: &[8],
            shared_bytes: 0,
            params: Some((&found[0], &structs)),
            param_names: &[],
            args: &positional,
        })
        .unwrap();
        let launch: crate::LaunchFile = toml::from_str(&text).expect("it parses");
        assert_eq!(launch.args[2], crate::launch_file::Argument::Integer(7));
        assert_eq!(launch.buffers["in"].len, Some(4));
        assert_eq!(launch.buffers["out"].len, Some(8));
        let too_many = ["1", "2", "[{ f32 = 1.0 }]", "4"].map(String::from);
        let error = from_command_line(&CommandLineLaunch {
            source: "k.cu",
            kernel: "k",
            grid: &[1],
            block: &[8],
            shared_bytes: 0,
            params: Some((&found[0], &structs)),
            param_names: &[],
            args: &too_many,
        })
        .unwrap_err();
        assert_eq!(
            error,
            "kernel `k` has no non-pointer parameter left for --arg `4`"
        );
        let error = command_line_argument("f32[x]", "a").unwrap_err();
        assert_eq!(error, "`x` is not a length");
        let error = command_line_argument("hello", "a").unwrap_err();
        assert!(error.starts_with("expected a number"), "{error}");
    }
}
