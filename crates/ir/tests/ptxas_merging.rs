//! The merge pass against ptxas: for every kernel of `programs/ptxas`, the
//! committed PTX (NVRTC 12.9) is parsed, merged, verified and round-tripped,
//! and its shared-memory accesses per CUDA line, with their widths and the
//! atomic form, are compared with those of the committed SASS (ptxas 12.9,
//! `nvdisasm -g -c`, `programs/ptxas/regen.py`).
//!
//! The SASS is read by a small reader of nvdisasm's text: a line `NAME:`
//! starts a kernel, a comment `//## File "F.cu", line N` sets the line of the
//! instructions after it, and `LDS`, `STS` and `ATOMS` instructions are the
//! shared-memory accesses (`.64`/`.128` for the width, `.U8`, `.S16` and the
//! like for sub-word ones, `POPC.INC` for a population-count increment).
//!
//! ptxas unrolls some loops the PTX keeps rolled (the bitonic sort's ten
//! stages), so a line's SASS may hold its accesses several times: a line
//! agrees when every access form appears the same number of times in the
//! SASS, up to one factor for the whole line.
//! The few lines where ptxas does what the merge pass does not model are
//! listed in `KNOWN_DIFFERENCES`, each with the reason, and must still differ.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use warpsim_ir::merge::merge_accesses;
use warpsim_ir::{parse_ptx, print_module, verify_module, AtomOp, Module, Op, StateSpace};

/// (kernel, CUDA line, why the model and ptxas differ there).
const KNOWN_DIFFERENCES: &[(&str, u32, &str)] = &[(
    "float_add_one",
    103,
    "ptxas implements a float atomic add on shared memory as a loop of a load and a \
         compare-and-swap (LDS + ATOMS.CAST.SPIN); the IR keeps one atomic",
)];

/// One shared-memory access form: what it does and how many bytes a thread moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Form {
    Load(u32),
    Store(u32),
    Atomic(u32),
    PopcIncrement,
}

/// Accesses of a kernel: line -> form -> count.
type LineForms = BTreeMap<u32, BTreeMap<Form, u32>>;

fn ptxas_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../programs/ptxas")
}

/// Reads nvdisasm's `-g -c` text: kernel -> its shared-memory accesses per line.
fn read_sass(text: &str) -> BTreeMap<String, LineForms> {
    let mut kernels: BTreeMap<String, LineForms> = BTreeMap::new();
    let mut kernel: Option<String> = None;
    let mut line = 0;
    for raw in text.lines() {
        let trimmed = raw.trim();
        if let Some(name) = trimmed.strip_suffix(':') {
            if !name.starts_with('.')
                && !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                kernel = Some(name.to_string());
                kernels.entry(name.to_string()).or_default();
                continue;
            }
        }
        if let Some(rest) = trimmed.strip_prefix("//## File ") {
            line = rest
                .rsplit("line ")
                .next()
                .and_then(|number| number.trim().parse().ok())
                .unwrap_or(0);
            continue;
        }
        let Some((_, instruction)) = trimmed.split_once("*/") else {
            continue;
        };
        let mut words = instruction.split_whitespace();
        let mut opcode = words.next().unwrap_or("");
        if opcode.starts_with('@') {
            opcode = words.next().unwrap_or("");
        }
        let Some(form) = sass_form(opcode) else {
            continue;
        };
        let Some(name) = &kernel else { continue };
        *kernels
            .entry(name.clone())
            .or_default()
            .entry(line)
            .or_default()
            .entry(form)
            .or_default() += 1;
    }
    kernels
}

/// The form of a SASS opcode, if it is a shared-memory access.
fn sass_form(opcode: &str) -> Option<Form> {
    let mut parts = opcode.split('.');
    let base = parts.next()?;
    let modifiers: Vec<&str> = parts.collect();
    let width = |default: u32| {
        modifiers
            .iter()
            .find_map(|m| match *m {
                "U8" | "S8" => Some(1),
                "U16" | "S16" => Some(2),
                "64" => Some(8),
                "128" => Some(16),
                _ => None,
            })
            .unwrap_or(default)
    };
    match base {
        "LDS" => Some(Form::Load(width(4))),
        "STS" => Some(Form::Store(width(4))),
        "ATOMS" if modifiers.starts_with(&["POPC", "INC"]) => Some(Form::PopcIncrement),
        "ATOMS" => Some(Form::Atomic(width(4))),
        _ => None,
    }
}

/// The shared-memory accesses of each kernel of a module, per line.
fn model_forms(module: &Module) -> BTreeMap<String, LineForms> {
    let mut kernels = BTreeMap::new();
    for kernel in &module.kernels {
        let mut lines: LineForms = BTreeMap::new();
        for instr in &kernel.instrs {
            let form = match &instr.op {
                Op::Load {
                    space: StateSpace::Shared,
                    ty,
                    dst,
                    ..
                } => Form::Load(ty.size_bytes() * dst.len() as u32),
                Op::Store {
                    space: StateSpace::Shared,
                    ty,
                    src,
                    ..
                } => Form::Store(ty.size_bytes() * src.len() as u32),
                Op::Atom {
                    space: StateSpace::Shared,
                    op: AtomOp::PopcIncrement,
                    ..
                } => Form::PopcIncrement,
                Op::Atom {
                    space: StateSpace::Shared,
                    ty,
                    ..
                } => Form::Atomic(ty.size_bytes()),
                _ => continue,
            };
            *lines
                .entry(instr.loc.line)
                .or_default()
                .entry(form)
                .or_default() += 1;
        }
        kernels.insert(kernel.name.clone(), lines);
    }
    kernels
}

/// Whether a line's SASS holds the model's accesses, each the same number of
/// times (ptxas may unroll the line's loop).
fn line_agrees(model: Option<&BTreeMap<Form, u32>>, sass: Option<&BTreeMap<Form, u32>>) -> bool {
    let empty = BTreeMap::new();
    let model = model.unwrap_or(&empty);
    let sass = sass.unwrap_or(&empty);
    if model.keys().collect::<BTreeSet<_>>() != sass.keys().collect::<BTreeSet<_>>() {
        return false;
    }
    let mut factor = None;
    for (form, &count) in model {
        let sass_count = sass[form];
        if !sass_count.is_multiple_of(count) {
            return false;
        }
        let this = sass_count / count;
        if *factor.get_or_insert(this) != this {
            return false;
        }
    }
    true
}

fn describe(forms: Option<&BTreeMap<Form, u32>>) -> String {
    match forms {
        None => "nothing".to_string(),
        Some(forms) => forms
            .iter()
            .map(|(form, count)| format!("{count} x {form:?}"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn sources() -> Vec<PathBuf> {
    let mut sources: Vec<PathBuf> = fs::read_dir(ptxas_dir())
        .expect("programs/ptxas exists")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "cu"))
        .collect();
    sources.sort();
    sources
}

/// Parses, verifies and merges the committed PTX of a source.
fn merged_module(source: &Path) -> (Module, Module) {
    let ptx_path = source.with_extension("ptx");
    let text = fs::read_to_string(&ptx_path).expect("the PTX is committed beside its source");
    let name = ptx_path.file_name().unwrap().to_string_lossy().into_owned();
    let original = parse_ptx(&name, &text).unwrap_or_else(|e| panic!("{name}: {e}"));
    verify_module(&original).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut merged = original.clone();
    merge_accesses(&mut merged);
    (original, merged)
}

#[test]
fn merged_shared_accesses_match_the_sass_line_by_line() {
    let mut checked_lines = 0;
    let mut failures = Vec::new();
    let mut known_seen = BTreeSet::new();
    let mut merged_lines = 0;
    for source in sources() {
        let (original, merged) = merged_module(&source);
        verify_module(&merged)
            .unwrap_or_else(|e| panic!("{}: the merged module: {e}", source.display()));
        let sass_text = fs::read_to_string(source.with_extension("sass"))
            .expect("the SASS is committed beside its source");
        let sass = read_sass(&sass_text);
        let model = model_forms(&merged);
        let before = model_forms(&original);
        assert_eq!(
            model.keys().collect::<Vec<_>>(),
            sass.keys().collect::<Vec<_>>(),
            "{}: the PTX and the SASS hold different kernels",
            source.display()
        );
        for (kernel, lines) in &model {
            let sass_lines = &sass[kernel];
            let all_lines: BTreeSet<u32> = lines.keys().chain(sass_lines.keys()).copied().collect();
            for line in all_lines {
                checked_lines += 1;
                let agrees = line_agrees(lines.get(&line), sass_lines.get(&line));
                if before[kernel].get(&line) != lines.get(&line) {
                    merged_lines += 1;
                }
                let known = KNOWN_DIFFERENCES
                    .iter()
                    .any(|(k, l, _)| k == kernel && *l == line);
                if known {
                    known_seen.insert((kernel.clone(), line));
                    if agrees {
                        failures.push(format!(
                            "{kernel} line {line} is listed as a known difference but now \
                             agrees: remove it from KNOWN_DIFFERENCES (model {}, SASS {})",
                            describe(lines.get(&line)),
                            describe(sass_lines.get(&line)),
                        ));
                    }
                } else if !agrees {
                    failures.push(format!(
                        "{} {kernel} line {line}: model {}, SASS {}",
                        source.file_name().unwrap().to_string_lossy(),
                        describe(lines.get(&line)),
                        describe(sass_lines.get(&line)),
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked_lines} lines differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(
        known_seen.len(),
        KNOWN_DIFFERENCES.len(),
        "every known difference names a line of a kernel"
    );
    // The kernels were written to exercise merging: many lines must change,
    // or the comparison would say little about the merge pass.
    assert!(merged_lines >= 30, "only {merged_lines} lines changed");
    eprintln!(
        "{checked_lines} lines checked against the SASS, {} known differences, \
         {merged_lines} lines changed by merging",
        KNOWN_DIFFERENCES.len()
    );
}

#[test]
fn merged_modules_round_trip_through_text() {
    for source in sources() {
        let (_, merged) = merged_module(&source);
        let printed = print_module(&merged);
        let reparsed = warpsim_ir::parse_module("merged.kir", &printed)
            .unwrap_or_else(|e| panic!("{}: {e}\n{printed}", source.display()));
        assert_eq!(
            reparsed,
            merged,
            "{}: parse(print(m)) != m",
            source.display()
        );
        verify_module(&reparsed).unwrap_or_else(|e| panic!("{}: {e}", source.display()));
        assert_eq!(print_module(&reparsed), printed);
    }
}

#[test]
fn the_sass_reader_reads_nvdisasm_text() {
    let text = "\
pair:
.text.pair:
\t//## File \"pairs.cu\", line 10
        /*00d0*/                   STS.64 [R0], R4 ;
\t//## File \"pairs.cu\", line 12
        /*00f0*/              @!P0 LDS.U16 R6, [R0] ;
        /*0100*/                   ATOMS.POPC.INC.32 RZ, [R6+URZ] ;
        /*0110*/                   ATOMS.ADD RZ, [R6], R11 ;
        /*0120*/                   LDG.E R2, desc[UR4][R2.64] ;
.L_x_0:
        /*0130*/                   LDS.128 R8, [R0] ;
";
    let kernels = read_sass(text);
    let lines = &kernels["pair"];
    assert_eq!(lines[&10], BTreeMap::from([(Form::Store(8), 1)]));
    assert_eq!(
        lines[&12],
        BTreeMap::from([
            (Form::Load(2), 1),
            (Form::PopcIncrement, 1),
            (Form::Atomic(4), 1),
            (Form::Load(16), 1),
        ])
    );
    assert_eq!(kernels.len(), 1);
}

/// Every `.kir` and `.ptx` file under `dir`, recursively.
fn programs(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("a readable directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            programs(&path, found);
        } else if path
            .extension()
            .is_some_and(|ext| ext == "kir" || ext == "ptx")
        {
            found.push(path);
        }
    }
}

#[test]
fn every_program_of_the_repository_merges_and_schedules_into_a_verified_round_tripping_module() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../programs");
    let mut files = Vec::new();
    programs(&root, &mut files);
    files.sort();
    let mut merged_any = 0;
    let mut scheduled_any = 0;
    for path in &files {
        let text = fs::read_to_string(path).expect("readable");
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let parsed = if path.extension().is_some_and(|ext| ext == "ptx") {
            parse_ptx(&name, &text)
        } else {
            warpsim_ir::parse_module(&name, &text)
        };
        // Programs that are meant not to parse or verify are not this test's business.
        let Ok(mut module) = parsed else { continue };
        if verify_module(&module).is_err() {
            continue;
        }
        let summary = merge_accesses(&mut module);
        if summary != warpsim_ir::merge::MergeSummary::default() {
            merged_any += 1;
        }
        // A rewritten module verifies and round-trips through its text.
        let verified_round_trip = |module: &Module| {
            verify_module(module).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let reparsed = warpsim_ir::parse_module("rewritten.kir", &print_module(module))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(&reparsed, module, "{}", path.display());
        };
        verified_round_trip(&module);
        // Then the load schedule, as the driver runs it: a verified,
        // round-tripping module that a second schedule leaves as it is.
        for kernel in &mut module.kernels {
            let summary = warpsim_ir::schedule::schedule_kernel(kernel);
            if summary != warpsim_ir::schedule::ScheduleSummary::default() {
                scheduled_any += 1;
            }
        }
        verified_round_trip(&module);
        let mut again = module.clone();
        for kernel in &mut again.kernels {
            warpsim_ir::schedule::schedule_kernel(kernel);
        }
        assert_eq!(
            again,
            module,
            "{}: a second schedule changed it",
            path.display()
        );
    }
    assert!(files.len() > 50, "found only {} programs", files.len());
    assert!(
        merged_any >= 6,
        "merging changed only {merged_any} programs"
    );
    assert!(
        scheduled_any >= 30,
        "the schedule changed only {scheduled_any} kernels"
    );
}
