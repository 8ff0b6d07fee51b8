//! What a CUDA source says of its kernels, read from the text without a
//! compiler: each `__global__` function's name, whether it has C linkage,
//! its template parameters, and its parameters with their CUDA types and
//! names; and the plain structs it defines. PTX keeps none of this (C++
//! kernels have mangled names, parameters are `_Z1kPi_param_0`), and
//! `warpsim init`, `run FILE.cu --arg` and the messages about arguments
//! need it.
//!
//! This is a reader for declarations as people write them, not a C++
//! parser: it skips comments, string and character literals and
//! preprocessor lines, and finds `__global__` declarators by their
//! parentheses. A parameter it cannot classify keeps its type as written.

/// A kernel declared in the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSignature {
    /// Its qualified name: `scale`, or `fx::scale` inside `namespace fx`.
    pub name: String,
    /// Declared `extern "C"` (its PTX name is its CUDA name).
    pub extern_c: bool,
    /// The text of `template <...>` before it, without the brackets.
    pub template: Option<String>,
    /// Template arguments of the first explicit instantiation in the source
    /// (`template __global__ void k<float>(float*);` gives `float`).
    pub instantiation: Option<String>,
    pub params: Vec<CudaParam>,
    /// The 1-based line of its name.
    pub line: u32,
}

/// A kernel parameter as written: its type (`const float*`) and name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaParam {
    pub ty: String,
    pub name: String,
}

impl CudaParam {
    /// Whether it is a pointer.
    pub fn is_pointer(&self) -> bool {
        self.ty.contains('*')
    }

    /// Whether it points to `const` data (an input, most likely).
    pub fn points_to_const(&self) -> bool {
        self.is_pointer()
            && self
                .ty
                .split('*')
                .next()
                .is_some_and(|base| has_word(base, "const"))
    }

    /// The scalar type the parameter is, or points to, without qualifiers:
    /// `const float* __restrict__` gives `float`.
    pub fn base_type(&self) -> String {
        let words: Vec<&str> = self
            .ty
            .split(|c: char| c == '*' || c == '&' || c.is_whitespace())
            .filter(|word| {
                !word.is_empty()
                    && !matches!(
                        *word,
                        "const"
                            | "volatile"
                            | "__restrict__"
                            | "__restrict"
                            | "restrict"
                            | "struct"
                    )
            })
            .collect();
        words.join(" ")
    }
}

/// A struct the source defines, with its fields in order (arrays as one
/// field with a count).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaStruct {
    pub name: String,
    pub fields: Vec<(String, String, u64)>,
}

/// The kernels of `text`, in the order they are first declared; a kernel
/// declared and then defined is listed once.
pub fn kernels(text: &str) -> Vec<KernelSignature> {
    let code = strip(text);
    let mut kernels: Vec<KernelSignature> = Vec::new();
    let mut search = 0;
    while let Some(found) = find_word(&code, "__global__", search) {
        search = found + "__global__".len();
        let Some(kernel) = kernel_at(&code, found) else {
            continue;
        };
        if !kernels.iter().any(|known| known.name == kernel.name) {
            kernels.push(kernel);
        }
    }
    for kernel in &mut kernels {
        kernel.instantiation = instantiation(&code, unqualified(&kernel.name));
    }
    kernels
}

/// The structs of `text` that hold plain fields (`struct P { float a; int
/// b[3]; const int* c; };`).
pub fn structs(text: &str) -> Vec<CudaStruct> {
    let code = strip(text);
    let mut found = Vec::new();
    let mut search = 0;
    while let Some(at) = find_word(&code, "struct", search) {
        search = at + "struct".len();
        let rest = &code[search..];
        let Some(open) = rest.find(['{', ';', '(']) else {
            break;
        };
        if !rest[open..].starts_with('{') {
            continue;
        }
        let name = rest[..open]
            .split_whitespace()
            .last()
            .unwrap_or("")
            .to_string();
        let Some(close) = matching(rest, open, '{', '}') else {
            continue;
        };
        let body = &rest[open + 1..close];
        let mut fields = Vec::new();
        let mut plain = !name.is_empty();
        for statement in body.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            if statement.contains(['(', '{', '}']) {
                plain = false;
                break;
            }
            let (declaration, count) = match statement.find('[') {
                Some(bracket) => {
                    let count = statement[bracket + 1..]
                        .trim_end_matches(']')
                        .trim()
                        .parse::<u64>()
                        .unwrap_or(1);
                    (&statement[..bracket], count)
                }
                None => (statement, 1),
            };
            for (index, declarator) in declaration.split(',').enumerate() {
                let declarator = declarator.trim();
                if index == 0 {
                    let (ty, field) = split_declaration(declarator);
                    fields.push((ty, field, count));
                } else if let Some((ty, _, _)) = fields.last().cloned() {
                    // `int a, b;`: the second shares the first's type.
                    fields.push((ty, declarator.to_string(), count));
                }
            }
        }
        if plain && !fields.is_empty() {
            found.push(CudaStruct { name, fields });
        }
        search += close;
    }
    found
}

/// The kernel whose `__global__` is at `at`, if a declarator follows.
fn kernel_at(code: &str, at: usize) -> Option<KernelSignature> {
    // The declarator: up to the first `(` that is not `__launch_bounds__(`
    // or another attribute's.
    let mut cursor = at + "__global__".len();
    let open = loop {
        let rest = &code[cursor..];
        let open = cursor + rest.find('(')?;
        if rest[..open - cursor].contains(['{', '}', ';']) {
            return None;
        }
        let before = code[cursor..open].trim_end();
        let word = before
            .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
            .next()
            .unwrap_or("");
        if word.starts_with("__launch_bounds__") || word == "__attribute__" || word.is_empty() {
            cursor = matching(code, open, '(', ')')? + 1;
            continue;
        }
        break open;
    };
    let head = &code[at..open];
    let declared = head
        .rsplit(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .next()?;
    if declared.is_empty() || declared.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        return None;
    }
    // A kernel declared inside `namespace fx { ... }` is `fx::scale` to
    // NVRTC's name expressions and to the user.
    let name = match enclosing_namespaces(code, at) {
        namespaces if namespaces.is_empty() || declared.contains("::") => declared.to_string(),
        namespaces => format!("{namespaces}::{declared}"),
    };
    let close = matching(code, open, '(', ')')?;
    let params = split_top_level(&code[open + 1..close], ',')
        .into_iter()
        .map(str::trim)
        .filter(|param| !param.is_empty() && *param != "void")
        .map(|param| {
            let param = param.split('=').next().unwrap_or(param).trim();
            let (ty, name) = split_declaration(param);
            CudaParam { ty, name }
        })
        .collect();
    // What comes before `__global__` on the way back to the previous
    // statement: `extern "C"`, `template <...>`.
    let start = code[..at]
        .rfind([';', '}', '{'])
        .map_or(0, |index| index + 1);
    let prefix = &code[start..at];
    let extern_c = prefix.contains("extern \"C\"") || inside_extern_c_block(code, at);
    let template = prefix.find("template").and_then(|position| {
        let open = position + prefix[position..].find('<')?;
        let close = matching(prefix, open, '<', '>')?;
        Some(prefix[open + 1..close].trim().to_string())
    });
    let line = code[..open].matches('\n').count() as u32 + 1;
    Some(KernelSignature {
        name,
        extern_c,
        template,
        instantiation: None,
        params,
        line,
    })
}

/// The named namespaces that enclose `at`, outermost first, joined by `::`
/// (empty at file scope). Anonymous namespaces add nothing: their members
/// are named without them.
fn enclosing_namespaces(code: &str, at: usize) -> String {
    let mut names = Vec::new();
    let mut search = 0;
    while let Some(found) = find_word(&code[..at], "namespace", search) {
        search = found + "namespace".len();
        let rest = &code[search..at];
        let Some(open) = rest.find(['{', ';', '=']) else {
            break;
        };
        // `namespace cg = cooperative_groups;` is an alias, not a scope.
        if !rest[open..].starts_with('{') {
            continue;
        }
        let open = search + open;
        if matching(code, open, '{', '}').is_none_or(|close| close > at) {
            let name = code[search..open].trim();
            if !name.is_empty() {
                names.push(name.to_string());
            }
        }
    }
    names.join("::")
}

/// `scale` of `fx::scale`.
pub fn unqualified(name: &str) -> &str {
    name.rsplit("::").next().unwrap_or(name)
}

/// Whether `at` is inside an `extern "C" { ... }` block.
fn inside_extern_c_block(code: &str, at: usize) -> bool {
    let mut search = 0;
    while let Some(found) = code[search..at].find("extern \"C\"") {
        let after = search + found + "extern \"C\"".len();
        let rest = code[after..].trim_start();
        if rest.starts_with('{') {
            let open = code.len() - rest.len();
            if matching(code, open, '{', '}').is_none_or(|close| close > at) {
                return true;
            }
        }
        search = after;
    }
    false
}

/// The template arguments of the first explicit instantiation of `name`
/// (`template __global__ void name<float>(...)` or `name<float><<<`).
fn instantiation(code: &str, name: &str) -> Option<String> {
    let mut search = 0;
    while let Some(found) = find_word(code, name, search) {
        search = found + name.len();
        let rest = &code[search..];
        if rest.starts_with('<') && !rest.starts_with("<<<") {
            let close = matching(rest, 0, '<', '>')?;
            return Some(rest[1..close].trim().to_string());
        }
    }
    None
}

/// `const float* __restrict__ in` as (`const float* __restrict__`, `in`);
/// a declaration without a name gets an empty one.
fn split_declaration(declaration: &str) -> (String, String) {
    let declaration = declaration.trim();
    let end = declaration.len();
    let start = declaration
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |index| index + 1);
    let name = &declaration[start..end];
    let ty = declaration[..start].trim();
    // A lone word is a type (`float` in a prototype), not a name.
    if ty.is_empty() || ty.ends_with("::") {
        return (declaration.to_string(), String::new());
    }
    (ty.to_string(), name.to_string())
}

/// `text` split at `separator` where no bracket of any kind is open.
fn split_top_level(text: &str, separator: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (index, c) in text.char_indices() {
        match c {
            '(' | '<' | '[' | '{' => depth += 1,
            ')' | '>' | ']' | '}' => depth -= 1,
            _ if c == separator && depth == 0 => {
                parts.push(&text[start..index]);
                start = index + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// The index of the bracket that closes the one at `open`.
fn matching(text: &str, open: usize, opening: char, closing: char) -> Option<usize> {
    let mut depth = 0usize;
    for (index, c) in text[open..].char_indices() {
        if c == opening {
            depth += 1;
        } else if c == closing {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(open + index);
            }
        }
    }
    None
}

/// Where `word` next occurs as a whole word, from byte `from`.
fn find_word(text: &str, word: &str, from: usize) -> Option<usize> {
    let mut search = from;
    while let Some(found) = text.get(search..)?.find(word) {
        let at = search + found;
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        let boundary = |c: Option<char>| !c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        if boundary(before) && boundary(after) {
            return Some(at);
        }
        search = at + word.len();
    }
    None
}

fn has_word(text: &str, word: &str) -> bool {
    find_word(text, word, 0).is_some()
}

/// `text` with comments, string and character literals (their insides)
/// and preprocessor lines blanked out, newlines kept, so that positions
/// and line numbers stay as they were.
fn strip(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut index = 0;
    let mut line_start = true;
    while index < bytes.len() {
        let c = bytes[index];
        let blank = |out: &mut String, byte: u8| out.push(if byte == b'\n' { '\n' } else { ' ' });
        if line_start && c == b'#' {
            // A preprocessor line, with its continuations.
            while index < bytes.len() && bytes[index] != b'\n' {
                if bytes[index] == b'\\' && bytes.get(index + 1) == Some(&b'\n') {
                    out.push_str(" \n");
                    index += 2;
                    continue;
                }
                blank(&mut out, bytes[index]);
                index += 1;
            }
            continue;
        }
        if c == b'/' && bytes.get(index + 1) == Some(&b'/') {
            while index < bytes.len() && bytes[index] != b'\n' {
                out.push(' ');
                index += 1;
            }
            continue;
        }
        if c == b'/' && bytes.get(index + 1) == Some(&b'*') {
            out.push_str("  ");
            index += 2;
            while index < bytes.len()
                && !(bytes[index] == b'*' && bytes.get(index + 1) == Some(&b'/'))
            {
                blank(&mut out, bytes[index]);
                index += 1;
            }
            out.push_str("  ");
            index = (index + 2).min(bytes.len());
            continue;
        }
        if c == b'"' || c == b'\'' {
            // Keep the quotes (`extern "C"` is read by them) and blank the
            // inside, except for `"C"`, which stays.
            let quote = c;
            let end = (index + 1..bytes.len())
                .scan(false, |escaped, position| {
                    let stop = !*escaped && bytes[position] == quote;
                    *escaped = !*escaped && bytes[position] == b'\\';
                    Some((position, stop))
                })
                .find(|&(_, stop)| stop)
                .map_or(bytes.len(), |(position, _)| position);
            let literal = &text[index..(end + 1).min(text.len())];
            if literal == "\"C\"" {
                out.push_str(literal);
            } else {
                out.push(quote as char);
                for &byte in &bytes[index + 1..end.min(bytes.len())] {
                    blank(&mut out, byte);
                }
                if end < bytes.len() {
                    out.push(quote as char);
                }
            }
            index = end + 1;
            line_start = false;
            continue;
        }
        // Multi-byte characters are copied whole.
        let width = text[index..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&text[index..index + width]);
        if c == b'\n' {
            line_start = true;
        } else if !c.is_ascii_whitespace() {
            line_start = false;
        }
        index += width;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = r#"
#include <cstdio>
#define N 64
// __global__ void commented(int* x) {}
struct Options { float scale; int offset; double bias[2]; const int* table; };

extern "C" __global__ void plain(const float* __restrict__ in, float* out, int n) {
  printf("__global__ void fake(int)\n");
}

template <typename T, int B>
__global__ void __launch_bounds__(256) transpose(T* out, const T* in, unsigned int rows) {}
template __global__ void transpose<float, 32>(float*, const float*, unsigned int);

extern "C" {
__global__ void insideBlock(Options options, double* d) {}
}

__global__ static void cpp_kernel(int* x, size_t count = 4) {}
"#;

    #[test]
    fn kernels_are_found_with_their_parameters() {
        let found = kernels(SOURCE);
        let names: Vec<&str> = found.iter().map(|kernel| kernel.name.as_str()).collect();
        assert_eq!(names, ["plain", "transpose", "insideBlock", "cpp_kernel"]);
        let plain = &found[0];
        assert!(plain.extern_c);
        assert_eq!(plain.line, 7);
        assert_eq!(
            plain.params,
            [
                CudaParam {
                    ty: "const float* __restrict__".to_string(),
                    name: "in".to_string()
                },
                CudaParam {
                    ty: "float*".to_string(),
                    name: "out".to_string()
                },
                CudaParam {
                    ty: "int".to_string(),
                    name: "n".to_string()
                },
            ]
        );
        assert!(plain.params[0].points_to_const());
        assert!(!plain.params[1].points_to_const());
        assert_eq!(plain.params[0].base_type(), "float");
        let transpose = &found[1];
        assert!(!transpose.extern_c);
        assert_eq!(transpose.template.as_deref(), Some("typename T, int B"));
        assert_eq!(transpose.instantiation.as_deref(), Some("float, 32"));
        assert_eq!(transpose.params[2].base_type(), "unsigned int");
        assert!(found[2].extern_c);
        assert_eq!(found[2].params[0].ty, "Options");
        assert!(!found[3].extern_c);
        assert_eq!(found[3].params[1].name, "count");
    }

    #[test]
    fn plain_structs_are_found_with_their_fields() {
        let found = structs(SOURCE);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].name, "Options");
        assert_eq!(
            found[0].fields,
            [
                ("float".to_string(), "scale".to_string(), 1),
                ("int".to_string(), "offset".to_string(), 1),
                ("double".to_string(), "bias".to_string(), 2),
                ("const int*".to_string(), "table".to_string(), 1),
            ]
        );
    }

    #[test]
    fn kernels_in_namespaces_have_qualified_names() {
        let text = r#"
namespace cg = cooperative_groups;
namespace fx {
struct Unused {};
__global__ void scale(float* data, float factor) { data[0] *= factor; }
namespace inner { template <typename T> __global__ void add(T* x) {} }
}
namespace { __global__ void hidden(int* x) {} }
namespace fx::deep { __global__ void nested(int* x) {} }
__global__ void top(int* x) {}
template __global__ void fx::inner::add<int>(int*);
"#;
        let found = kernels(text);
        let names: Vec<&str> = found.iter().map(|kernel| kernel.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "fx::scale",
                "fx::inner::add",
                "hidden",
                "fx::deep::nested",
                "top"
            ]
        );
        assert_eq!(found[1].instantiation.as_deref(), Some("int"));
        assert_eq!(unqualified(&found[0].name), "scale");
    }

    #[test]
    fn odd_text_does_not_panic() {
        for text in [
            "__global__",
            "__global__ (",
            "__global__ void (((",
            "\"unterminated",
            "/* open",
            "struct {",
            "template <",
            "extern \"C\" {",
            "namespace",
            "namespace a {",
            "namespace a { __global__ void k(",
        ] {
            let _ = kernels(text);
            let _ = structs(text);
        }
    }
}
