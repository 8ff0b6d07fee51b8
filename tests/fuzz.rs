//! Fuzzing the front end and the machine with proptest: no input may make
//! them panic ("No panic on user input", DESIGN.md). Inputs are (a) random
//! text over a `.kir`-like alphabet, (b) random statements inside a kernel
//! header that declares registers of every kind, and (c) the programs of
//! `programs/` and `tests/fail/` with random mutations. Whatever parses is
//! printed and re-parsed, verified; whatever verifies is lowered; whatever
//! lowers runs one small block under a low instruction limit. Every stage may
//! return `Ok` or `Err`; none may panic.

#[allow(unused_imports)]
mod support;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use warpsim_machine::{GlobalMemory, Launch, MachineConfig, Program};

/// The seed of the committed runs, so that they are reproducible.
const SEED: u64 = 0x005e_ed0f_3a2b;

/// 256 cases per property from a fixed seed; `PROPTEST_CASES=N` and
/// `PROPTEST_RNG_SEED=S` run a longer or different campaign.
fn config() -> Config {
    let from_environment = Config::default();
    let set = |name: &str| std::env::var_os(name).is_some();
    Config {
        cases: if set("PROPTEST_CASES") {
            from_environment.cases
        } else {
            256
        },
        rng_seed: if set("PROPTEST_RNG_SEED") {
            from_environment.rng_seed
        } else {
            RngSeed::Fixed(SEED)
        },
        // Failures are reported with their minimal input; no regression
        // files are written into the repository.
        failure_persistence: None,
        ..from_environment
    }
}

/// The machine every program that lowers runs on: one block of 33 threads
/// (a full warp and one lane of a second), at most 20000 warp instructions.
fn machine() -> &'static MachineConfig {
    static MACHINE: OnceLock<MachineConfig> = OnceLock::new();
    MACHINE.get_or_init(|| {
        let mut config = MachineConfig::hopper();
        config.limits.max_warp_instructions_per_block = 20_000;
        config
    })
}

/// How far one input went, for the statistics printed at the end.
#[derive(Clone, Copy, Debug, Default)]
struct Reached {
    parsed: u32,
    verified: u32,
    lowered: u32,
    ran: u32,
}

impl Reached {
    fn add(&mut self, other: Reached) {
        self.parsed += other.parsed;
        self.verified += other.verified;
        self.lowered += other.lowered;
        self.ran += other.ran;
    }
}

/// The machine refuses blocks whose simulated state passes
/// `warpsim_machine::MAX_BLOCK_STATE_BYTES`; the fuzzer skips inputs above this
/// smaller bound so that every case stays quick.
const MAX_BLOCK_STATE_BYTES: u64 = 64 << 20;

/// Every stage on `text`; a panic anywhere fails the test case.
fn exercise(text: &str) -> Result<Reached, TestCaseError> {
    let mut reached = Reached::default();
    let result = std::panic::catch_unwind(|| {
        let mut reached = Reached::default();
        // What `warpsim print` and `warpsim run` do, with rendering.
        let _ = warpsim_driver::parse_source("fuzz.kir", text, Path::new("."));
        let module = match warpsim_ir::parse_module("fuzz.kir", text) {
            Ok(module) => module,
            Err(error) => {
                let _ = warpsim_driver::diagnostics::render_parse_error(&error, text);
                return Ok(reached);
            }
        };
        reached.parsed = 1;
        // The printed form parses again and prints the same.
        let printed = warpsim_ir::print_module(&module);
        match warpsim_ir::parse_module("fuzz.kir", &printed) {
            Ok(again) => {
                let reprinted = warpsim_ir::print_module(&again);
                if reprinted != printed {
                    return Err(format!(
                        "printing is not stable:\n--- input\n{text}\n--- printed\n{printed}\n--- reprinted\n{reprinted}"
                    ));
                }
            }
            Err(error) => {
                return Err(format!(
                    "the printed module does not parse: {error}\n--- input\n{text}\n--- printed\n{printed}"
                ))
            }
        }
        if warpsim_ir::verify_module(&module).is_err() {
            return Ok(reached);
        }
        reached.verified = 1;
        let Some(first) = module.kernels.first() else {
            return Ok(reached);
        };
        let kernel = module
            .kernel(&first.name)
            .expect("the first kernel has an id");
        let Ok(program) = Program::lower(&module, kernel) else {
            return Ok(reached);
        };
        reached.lowered = 1;
        let block_state = u64::from(program.local_bytes) * 33
            + u64::from(program.value_regs) * 32 * 8 * 2
            + u64::from(program.static_shared_bytes);
        if block_state > MAX_BLOCK_STATE_BYTES {
            return Ok(reached);
        }
        let mut memory = GlobalMemory::new();
        let global_variable_addresses = program
            .global_variables
            .iter()
            .map(|variable| {
                warpsim_machine::memory::buffer_base(
                    memory.add_buffer(&variable.name, &variable.initial),
                )
            })
            .collect();
        let launch = Launch {
            grid: [1, 1, 1],
            block: [33, 1, 1],
            dynamic_shared_bytes: 0,
            params: vec![0; program.param_bytes as usize],
            global_variable_addresses,
            registers_per_thread: None,
        };
        // With every checker on: it only observes, so the run is the same,
        // and its bookkeeping must not panic on any input either.
        let options = warpsim_machine::RunOptions {
            host_threads: 1,
            check_initialization: true,
            check_races: true,
            timeline: false,
            sample_waves: 0,
        };
        if let Ok(outcome) = warpsim_machine::run_with(
            &program,
            &launch,
            &memory,
            machine(),
            options,
            &Default::default(),
        ) {
            reached.ran = 1;
            // A fault is rendered as `warpsim run` renders it.
            if let Some(error) = &outcome.error {
                let locations = warpsim_driver::Locations::default();
                let file_of = |pc: u32| locations.place(&module, program.locations[pc as usize]);
                let mut sources = warpsim_driver::diagnostics::Sources::new(Path::new("."));
                sources.add("fuzz.kir", text.to_string());
                let _ = warpsim_driver::diagnostics::fault_summary(error, &file_of);
                let _ = warpsim_driver::diagnostics::render_fault(error, &file_of, &mut sources);
            }
        }
        Ok(reached)
    });
    match result {
        Ok(Ok(stages)) => reached.add(stages),
        Ok(Err(message)) => return Err(TestCaseError::fail(message)),
        Err(_) => {
            return Err(TestCaseError::fail(format!(
                "panicked on this input:\n{text}"
            )))
        }
    }
    Ok(reached)
}

/// Runs `strategy` through `exercise` and reports how far the inputs got.
fn fuzz(name: &str, strategy: impl Strategy<Value = String>) -> Reached {
    let mut runner = TestRunner::new(config());
    let total = std::cell::Cell::new(Reached::default());
    let result = runner.run(&strategy, |text| {
        let reached = exercise(&text)?;
        let mut sum = total.get();
        sum.add(reached);
        total.set(sum);
        Ok(())
    });
    if let Err(error) = result {
        panic!("{name}: {error}");
    }
    let total = total.get();
    eprintln!("{name}: {} cases, reached {total:?}", config().cases);
    total
}

// ---------------------------------------------------------------------------
// (a) Random text over a `.kir`-like alphabet.

#[rustfmt::skip]
const PIECES: &[&str] = &[
    ".kernel", ".reg", ".shared", ".local", ".extern", ".param", ".align", ".file", ".loc", ".u8",
    ".u16", ".u32", ".u64", ".s8", ".s32", ".s64", ".b32", ".b64", ".f32", ".f64", ".pred", ".x",
    ".v2", ".v4", "k", "tile", "L0", "L1", "%r0", "%r1", "%p0", "%d0", "%f0", "%tid.x", "%ntid.y",
    "%laneid", "%r<4>", "%", "add.u32", "mov.u32", "ld.shared.u32", "st.global.v2.f32",
    "setp.lt.s32", "bar.sync", "bra", "exit", "mul.wide.u32", "atom.shared.cas.b32",
    "shfl.sync.idx.b32", "vote.sync.ballot.b32", "cvt.rzi.s32.f32", "0", "1", "-1", "32",
    "4294967296", "18446744073709551615", "99999999999999999999", "0x", "0xFF", "0f3F800000",
    "0f3F80", "0d3FF0000000000000", "0f", "0d", "1.5", "1e", "1e400", "2.", ".5", "(", ")", "{",
    "}", "[", "]", "<", ">", ",", ";", ":", "@", "!", "+", "-", "|", "=", "\"", "\"a.cu\"", "//",
    "/*", "*/", "\n", "\r\n", "\t", " ", " ", " ", "é", "#", "\u{0}",
];

fn random_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..120).prop_map(|pieces| pieces.concat())
}

#[test]
fn random_text_never_panics() {
    fuzz("random text", random_text());
}

// ---------------------------------------------------------------------------
// (b) Random statements in a kernel that declares what they name.

const HEADER: &str = "\
.kernel fuzz(.param .u64 out, .param .u32 n, .param .f32 x)
{
    .shared .align 16 .u32 s[64];
    .local .align 8 .u64 l[4];
    .reg .u32 %r<4>;
    .reg .s32 %i<2>;
    .reg .u64 %d<2>;
    .reg .f32 %f<2>;
    .reg .f64 %g<2>;
    .reg .b32 %b<2>;
    .reg .pred %p<2>;
    mov.u32 %r0, s;
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 15;
    mad.lo.u32 %r0, %r2, 4, %r0;
    ld.param.u64 %d0, [out];
    setp.lt.u32 %p0, %r1, 16;
    mov.f32 %f0, 1.5;
";

/// Instruction templates; the upper-case words are operand slots (see [`slot`]).
#[rustfmt::skip]
const TEMPLATES: &[&str] = &[
    "add.u32 R, S, S", "add.s32 R, S, S", "sub.u32 R, S, S", "mul.lo.u32 R, S, S",
    "mul.hi.u32 R, S, S", "mul.wide.u32 D, S, S", "mad.lo.u32 R, S, S, S",
    "mad.wide.u32 D, S, S, DS", "div.u32 R, S, S", "div.s32 R, S, S", "rem.u32 R, S, S",
    "rem.s32 R, S, S", "min.s32 R, S, S", "max.u32 R, S, S", "and.b32 R, S, S", "or.b32 R, S, S",
    "xor.b32 R, S, S", "not.b32 R, S", "shl.b32 R, S, S", "shr.u32 R, S, S", "shr.s32 R, S, S",
    "popc.b32 R, S", "clz.b32 R, S", "brev.b32 R, S", "neg.s32 R, S", "abs.s32 R, S",
    "mov.u32 R, S", "mov.u32 R, s", "mov.u64 D, DS", "add.s64 D, DS, DS", "sub.u64 D, DS, DS",
    "mul.lo.u64 D, DS, DS", "div.u64 D, DS, DS", "shl.b64 D, DS, S", "cvt.u64.u32 D, S",
    "cvt.s64.s32 D, S", "cvt.u32.u64 R, DS", "cvt.sat.u32.s32 R, S", "add.f32 F, FS, FS",
    "sub.f32 F, FS, FS", "mul.f32 F, FS, FS", "fma.rn.f32 F, FS, FS, FS", "div.rn.f32 F, FS, FS",
    "div.approx.f32 F, FS, FS", "sqrt.rn.f32 F, FS", "rsqrt.approx.f32 F, FS", "rcp.rn.f32 F, FS",
    "neg.f32 F, FS", "abs.f32 F, FS", "min.f32 F, FS, FS", "max.f32 F, FS, FS",
    "cvt.rn.f32.u32 F, S", "cvt.rn.f32.s32 F, S", "cvt.rzi.s32.f32 R, FS", "cvt.rni.u32.f32 R, FS",
    "cvt.f64.f32 G, FS", "cvt.rn.f32.f64 F, GS", "add.f64 G, GS, GS", "fma.rn.f64 G, GS, GS, GS",
    "sqrt.rn.f64 G, GS", "setp.lt.f32 P, FS, FS", "setp.nan.f32 P, FS, FS",
    "setp.geu.f64 P, GS, GS", "setp.lt.u32 P, S, S", "setp.eq.s32 P, S, S",
    "setp.ne.u64 P, DS, DS", "setp.hi.u32 P, S, S", "setp.lt.and.u32 P, S, S, PS",
    "setp.ge.or.s32 P, S, S, PS", "selp.u32 R, S, S, PS", "selp.f32 F, FS, FS, PS",
    "selp.u64 D, DS, DS, PS", "not.pred P, PR", "mov.pred P, PR", "and.pred P, PR, PR",
    "ld.shared.u32 R, ASH", "st.shared.u32 ASH, S", "ld.shared.f32 F, ASH",
    "st.shared.f32 ASH, FS", "ld.shared.v2.u32 {R, R}, ASH8", "st.shared.v2.u32 ASH8, {S, S}",
    "ld.shared.v4.u32 {R, R, R, R}, ASH16", "st.shared.v4.u32 ASH16, {S, S, S, S}",
    "ld.shared.u8 R, ASH1", "ld.shared.s16 R, ASH2", "st.shared.u16 ASH2, S",
    "st.shared.u8 ASH1, S", "ld.shared.u64 D, ASH8", "ld.global.u32 R, AGL",
    "st.global.u32 AGL, S", "ld.local.u64 D, ALOC", "st.local.u64 ALOC, DS",
    "ld.local.u32 R, ALOC", "st.local.v2.u32 ALOC, {S, S}", "ld.param.u64 D, [out]",
    "ld.param.u32 R, [n]", "ld.param.f32 F, [x]", "ld.u32 R, AGEN", "st.u32 AGEN, S",
    "ld.volatile.shared.u32 R, ASH", "ld.relaxed.cta.shared.u32 R, ASH",
    "st.release.gpu.shared.u32 ASH, S", "atom.shared.add.u32 R, ASH, S",
    "atom.shared.cas.b32 R, ASH, S, S", "atom.shared.exch.b32 R, ASH, S",
    "atom.shared.inc.u32 R, ASH, S", "atom.shared.dec.u32 R, ASH, S",
    "atom.shared.min.s32 R, ASH, S", "atom.shared.add.f32 F, ASH, FS",
    "atom.shared.or.b32 R, ASH, S", "atom.global.add.u32 R, AGL, S", "red.shared.add.u32 ASH, S",
    "red.shared.max.s32 ASH, S", "red.shared.xor.b32 ASH, S", "bar.sync BID", "bar.sync BID, CNT",
    "barrier.sync.aligned BID", "bar.arrive BID, CNT", "bar.red.popc.u32 R, BID, PS",
    "bar.red.and.pred P, BID, PS", "bar.red.or.pred P, BID, CNT, PS", "bar.warp.sync MASK",
    "membar.cta", "membar.gl", "fence.sc.gpu", "fence.acq_rel.cta",
    "shfl.sync.bfly.b32 R, S, S, S, MASK", "shfl.sync.idx.b32 R|P, S, S, S, MASK",
    "shfl.sync.up.b32 R, S, S, S, MASK", "shfl.sync.down.b32 R, S, S, S, MASK",
    "vote.sync.ballot.b32 R, PS, MASK", "vote.sync.any.pred P, PS, MASK",
    "vote.sync.all.pred P, PS, MASK", "vote.sync.uni.pred P, PS, MASK", "bra LABEL",
    "bra.uni LABEL", "exit", "ret",
];

/// What an operand slot may be filled with.
#[rustfmt::skip]
fn slot(name: &str) -> Option<&'static [&'static str]> {
    Some(match name {
        "R" => &["%r0", "%r1", "%r2", "%r3", "%b0", "%b1", "%i0", "%i1"],
        "S" => &[
            "%r0", "%r1", "%r2", "%r3", "%b0", "%i0", "%tid.x", "%tid.y", "%ntid.x", "%ctaid.x",
            "%laneid", "%warpid", "%lanemask_lt", "0", "1", "2", "4", "16", "31", "32", "33", "-1",
            "0xFFFFFFFF", "0x80000000",
        ],
        "D" => &["%d0", "%d1"],
        "DS" => &["%d0", "%d1", "0", "8", "%clock64", "-1", "0x8000000000000000"],
        "F" => &["%f0", "%f1"],
        "FS" => &[
            "%f0", "%f1", "1.5", "0.0", "-0.5", "0f3F800000", "0f7FC00000", "0f7F800000", "1e38",
        ],
        "G" => &["%g0", "%g1"],
        "GS" => &["%g0", "%g1", "2.5", "0d3FF0000000000000", "0d7FF0000000000000", "-0.0"],
        "P" => &["%p0", "%p1"],
        "PS" => &["%p0", "%p1", "!%p0", "!%p1"],
        "PR" => &["%p0", "%p1"],
        "ASH" => &[
            "[%r0]", "[%r0+4]", "[%r0-4]", "[s]", "[s+4]", "[s+252]", "[s+256]", "[%r1]", "[%r3]",
        ],
        "ASH1" => &["[s+3]", "[%r0+1]", "[s+255]"],
        "ASH2" => &["[s+2]", "[%r0+2]", "[s+1]"],
        "ASH8" => &["[s]", "[s+8]", "[%r0]", "[s+4]", "[s+248]"],
        "ASH16" => &["[s]", "[s+16]", "[%r0]", "[s+240]", "[s+8]"],
        "AGL" => &["[%d0]", "[%d0+4]", "[%d1]"],
        "ALOC" => &["[l]", "[l+8]", "[l+24]", "[l+32]", "[%r2]", "[l+4]"],
        "AGEN" => &["[%d0]", "[%d1]", "[%d1+4]"],
        "BID" => &["0", "0", "1", "2", "15", "%r3"],
        "CNT" => &["32", "64", "%r3", "96"],
        "MASK" => &["0xFFFFFFFF", "0xFFFFFFFF", "1", "%r2", "-1", "0x0000FFFF"],
        "LABEL" => &["L0", "L1", "L2", "L3", "L4"],
        _ => return None,
    })
}

/// A statement from a template: each slot filled with a value of its kind,
/// or now and then with any operand at all.
fn instruction(template: &str, choices: &[(u16, u16)]) -> String {
    let mut out = String::new();
    let mut choices = choices.iter().cycle();
    let mut word = String::new();
    let mut flush = |word: &mut String, out: &mut String| {
        if let Some(values) = slot(word) {
            let &(kind, pick) = choices.next().expect("choices are never empty");
            if kind % 256 == 0 {
                out.push_str(OPERANDS[usize::from(pick) % OPERANDS.len()]);
            } else {
                out.push_str(values[usize::from(pick) % values.len()]);
            }
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in template.chars() {
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Any operand, for the slots that get the wrong kind on purpose.
#[rustfmt::skip]
const OPERANDS: &[&str] = &[
    "%r0", "%i1", "%d0", "%f0", "%g0", "%b1", "%p0", "!%p1", "%tid.x", "%clock", "%clock64", "0",
    "-1", "4294967296", "1.5", "0f3F800000", "0d3FF0000000000000", "[%r0]", "[%d0]", "[s]", "[l]",
    "[out]", "[64]", "{%r0, %r1}", "s", "l", "out", "L0",
];

fn statement() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => (
            prop::option::weighted(0.2, prop::sample::select(&["@%p0 ", "@!%p0 ", "@%p1 "][..])),
            prop::sample::select(TEMPLATES),
            prop::collection::vec((any::<u16>(), any::<u16>()), 1..6),
        )
            .prop_map(|(guard, template, choices)| {
                format!("    {}{};\n", guard.unwrap_or(""), instruction(template, &choices))
            }),
        1 => prop::sample::select(&["L3:\n", "L4:\n"][..]).prop_map(str::to_string),
    ]
}

fn random_kernel() -> impl Strategy<Value = String> {
    prop::collection::vec(statement(), 0..32).prop_map(|statements| {
        let mut text = HEADER.to_string();
        let mut labels = vec!["L0:\n", "L1:\n", "L2:\n", "L3:\n", "L4:\n"];
        for statement in statements {
            // Each label is placed once: in the body, or else at the end.
            if statement.ends_with(":\n") {
                let Some(at) = labels.iter().position(|label| *label == statement) else {
                    continue;
                };
                labels.remove(at);
            }
            text.push_str(&statement);
        }
        text.push_str(&labels.concat());
        text.push_str("    exit;\n}\n");
        text
    })
}

#[test]
fn random_kernels_never_panic() {
    let reached = fuzz("random kernels", random_kernel());
    // The generator is only useful if some of its kernels get to run.
    assert!(reached.ran > 0, "no random kernel ran: {reached:?}");
}

// ---------------------------------------------------------------------------
// (c) Mutations of the programs of the repository.

/// The `.kir` files of `programs/` and `tests/fail/` (but not of
/// `tests/fail/bugs/`), with their text.
fn corpus() -> &'static [(PathBuf, String)] {
    static CORPUS: OnceLock<Vec<(PathBuf, String)>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let root = support::repo_root();
        let mut files = Vec::new();
        let mut dirs = vec![root.join("programs"), root.join("tests/fail")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("a corpus directory") {
                let path = entry.expect("a directory entry").path();
                // `tests/fail/bugs/` holds inputs of known bugs (ignored tests).
                if path.is_dir() && !path.ends_with("bugs") {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "kir") {
                    let text = std::fs::read_to_string(&path).expect("a readable program");
                    files.push((path, text));
                }
            }
        }
        files.sort();
        assert!(files.len() >= 20, "only {} programs to mutate", files.len());
        files
    })
}

/// Splits text into tokens that keep everything: runs of word characters,
/// runs of whitespace, and single other characters.
fn tokens(text: &str) -> Vec<String> {
    let mut tokens: Vec<String> = Vec::new();
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' || c == '%' || c == '.' {
            0
        } else if c.is_whitespace() {
            1
        } else {
            2
        }
    };
    for c in text.chars() {
        match tokens.last_mut() {
            Some(last) if class(c) != 2 && last.chars().next().map(class) == Some(class(c)) => {
                last.push(c)
            }
            _ => tokens.push(c.to_string()),
        }
    }
    tokens
}

#[rustfmt::skip]
const NUMBERS: &[&str] = &[
    "0", "1", "2", "3", "7", "8", "15", "16", "17", "31", "32", "33", "63", "64", "127", "128",
    "255", "256", "1023", "1024", "4095", "4096", "65535", "65536", "2147483647", "2147483648",
    "4294967295", "4294967296", "18446744073709551615", "0x80000000", "1.0", "1e38", "1e39",
    "0f7F800000", "0fFFFFFFFF", "0d7FF8000000000000",
];

/// One mutation, chosen and placed by the numbers drawn for it.
#[derive(Clone, Debug)]
enum Mutation {
    DeleteToken(usize),
    DuplicateToken(usize),
    SwapTokens(usize, usize),
    ChangeNumber(usize, usize),
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let any_index = any::<usize>();
    prop_oneof![
        1 => any_index.prop_map(Mutation::DeleteToken),
        1 => any_index.prop_map(Mutation::DuplicateToken),
        1 => (any_index, any_index).prop_map(|(a, b)| Mutation::SwapTokens(a, b)),
        6 => (any_index, any_index).prop_map(|(a, b)| Mutation::ChangeNumber(a, b)),
        1 => any_index.prop_map(Mutation::DeleteLine),
        1 => any_index.prop_map(Mutation::DuplicateLine),
        1 => (any_index, any_index).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        1 => any_index.prop_map(Mutation::Truncate),
    ]
}

fn mutate(text: &str, mutation: &Mutation) -> String {
    let mut tokens = tokens(text);
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    if tokens.is_empty() {
        return String::new();
    }
    let token = |index: usize| index % tokens.len();
    match *mutation {
        Mutation::DeleteToken(a) => {
            tokens.remove(token(a));
        }
        Mutation::DuplicateToken(a) => {
            let at = token(a);
            tokens.insert(at, tokens[at].clone());
        }
        Mutation::SwapTokens(a, b) => {
            let (a, b) = (token(a), token(b));
            tokens.swap(a, b);
        }
        Mutation::ChangeNumber(a, b) => {
            let numbers: Vec<usize> = (0..tokens.len())
                .filter(|&i| tokens[i].starts_with(|c: char| c.is_ascii_digit()))
                .collect();
            if let Some(&at) = numbers.get(a % numbers.len().max(1)) {
                tokens[at] = NUMBERS[b % NUMBERS.len()].to_string();
            }
        }
        Mutation::DeleteLine(a) => {
            let at = a % lines.len();
            lines.remove(at);
            return lines.concat();
        }
        Mutation::DuplicateLine(a) => {
            let at = a % lines.len();
            lines.insert(at, lines[at].clone());
            return lines.concat();
        }
        Mutation::SwapLines(a, b) => {
            let (a, b) = (a % lines.len(), b % lines.len());
            lines.swap(a, b);
            return lines.concat();
        }
        Mutation::Truncate(a) => {
            let chars: Vec<char> = text.chars().collect();
            return chars[..a % (chars.len() + 1)].iter().collect();
        }
    }
    tokens.concat()
}

fn mutated_program() -> impl Strategy<Value = String> {
    (
        any::<prop::sample::Index>(),
        prop::collection::vec(mutation(), 1..4),
    )
        .prop_map(|(program, mutations)| {
            let corpus = corpus();
            let (_, text) = &corpus[program.index(corpus.len())];
            mutations
                .iter()
                .fold(text.clone(), |text, mutation| mutate(&text, mutation))
        })
}

#[test]
fn the_programs_as_written_parse_and_run() {
    // The unmutated seeds go through every stage without a panic, and the
    // good ones get all the way.
    let mut reached = Reached::default();
    for (path, text) in corpus() {
        reached.add(exercise(text).unwrap_or_else(|error| panic!("{}: {error}", path.display())));
    }
    assert!(reached.ran >= 20, "{reached:?}");
}

#[test]
fn mutated_programs_never_panic() {
    let reached = fuzz("mutated programs", mutated_program());
    assert!(reached.ran > 0, "no mutated program ran: {reached:?}");
}

#[test]
fn mutations_change_programs() {
    // A sanity check of the mutator itself.
    let text = ".kernel k()\n{\n    bar.sync 0;\n    exit;\n}\n";
    assert_eq!(tokens(text).concat(), text);
    assert_eq!(
        mutate(text, &Mutation::ChangeNumber(0, 10)),
        text.replace("sync 0", "sync 32")
    );
    assert_eq!(
        mutate(text, &Mutation::DeleteLine(2)),
        text.replace("    bar.sync 0;\n", "")
    );
    assert_eq!(mutate(text, &Mutation::Truncate(3)), ".ke");
}

/// A longer campaign that does not stop at the first failure: every generator
/// runs `PROPTEST_CASES` cases (20000 unless set), and each distinct panic
/// site (or printer failure) is listed once, with the shortest input that
/// reached it.
#[test]
#[ignore = "a long fuzzing campaign, run by hand: cargo test -p warpsim --test fuzz -- --ignored"]
fn campaign() {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    static SITE: Mutex<Option<String>> = Mutex::new(None);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| {
        let site = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        *SITE.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!("{site}: {message}"));
    }));
    let mut config = config();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = 20_000;
    }
    let cases = config.cases;
    let mut runner = TestRunner::new(config);
    let generators: Vec<(&str, BoxedStrategy<String>)> = vec![
        ("random text", random_text().boxed()),
        ("random kernels", random_kernel().boxed()),
        ("mutated programs", mutated_program().boxed()),
    ];
    let mut found: BTreeMap<String, String> = BTreeMap::new();
    for (name, strategy) in &generators {
        let mut reached = Reached::default();
        for _ in 0..cases {
            let text = strategy
                .new_tree(&mut runner)
                .expect("the generators never reject")
                .current();
            *SITE.lock().unwrap_or_else(|e| e.into_inner()) = None;
            match exercise(&text) {
                Ok(stages) => reached.add(stages),
                Err(error) => {
                    let key = SITE
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .take()
                        .unwrap_or_else(|| {
                            error.to_string().lines().next().unwrap_or("").to_string()
                        });
                    let shortest = found.entry(key).or_insert_with(|| text.clone());
                    if text.len() < shortest.len() {
                        *shortest = text;
                    }
                }
            }
        }
        eprintln!("{name}: {cases} cases, reached {reached:?}");
    }
    std::panic::set_hook(previous);
    for (site, input) in &found {
        eprintln!("=== {site}\n{input}");
    }
    assert!(found.is_empty(), "{} distinct failures", found.len());
}

/// The smallest input of each panic the campaigns found.
const FOUND: &[&str] = &[
    // `push_sectors` computes `address + size - 1` before the bounds check.
    ".kernel k()\n{\n    .reg .u32 %r;\n    .reg .u64 %d;\n    mov.u64 %d, -8;\n    ld.global.u32 %r, [%d+4];\n    exit;\n}\n",
];

/// Inputs the campaigns found that once panicked (a global access at the top
/// of the address space overflowed in `push_sectors`).
#[test]
fn what_the_campaigns_found_does_not_panic() {
    for text in FOUND {
        let reached = exercise(text).unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(reached.ran, 1, "{text}");
    }
}

// ---------------------------------------------------------------------------
// (d) The PTX that NVRTC wrote for programs/, with random mutations, through
// the PTX front end: parse, verify, print as `.kir` and re-parse, merge and
// schedule as the driver does, lower.

/// Every `.ptx` file of programs/cuda, programs/corpus and programs/tensor.
fn ptx_corpus() -> &'static [(PathBuf, String)] {
    static CORPUS: OnceLock<Vec<(PathBuf, String)>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let mut files = Vec::new();
        for directory in ["programs/cuda", "programs/corpus", "programs/tensor"] {
            let dir = support::repo_root().join(directory);
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut paths: Vec<PathBuf> = entries
                .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                .filter(|path| path.extension().is_some_and(|e| e == "ptx"))
                .collect();
            paths.sort();
            for path in paths {
                let text = std::fs::read_to_string(&path).expect("a readable PTX file");
                files.push((path, text));
            }
        }
        files
    })
}

/// The PTX stages on `text` (parse, the `.kir` round trip, verify, merge
/// and schedule, lower); a panic anywhere fails the case. Returns how
/// many kernels lowered.
fn exercise_ptx(text: &str) -> Result<usize, TestCaseError> {
    let outcome = std::panic::catch_unwind(|| {
        let Ok(module) = warpsim_ir::parse_ptx("fuzz.ptx", text) else {
            return 0;
        };
        let printed = warpsim_ir::print_module(&module);
        let reparsed = warpsim_ir::parse_module("fuzz.kir", &printed);
        assert_eq!(
            reparsed.as_ref().ok(),
            Some(&module),
            "the .kir round trip changed the module"
        );
        if warpsim_ir::verify_module(&module).is_err() {
            return 0;
        }
        // The driver's rewrites before lowering, as it runs them on
        // NVVM's PTX: the result must still verify.
        let mut module = module;
        warpsim_ir::merge::merge_accesses(&mut module);
        for kernel in &mut module.kernels {
            warpsim_ir::schedule::schedule_kernel(kernel);
        }
        assert!(
            warpsim_ir::verify_module(&module).is_ok(),
            "merged and scheduled, the module no longer verifies"
        );
        (0..module.kernels.len())
            .filter(|&index| Program::lower(&module, warpsim_ir::KernelId(index as u32)).is_ok())
            .count()
    });
    outcome.map_err(|_| TestCaseError::fail(format!("panicked on this PTX:\n{text}")))
}

#[test]
fn the_ptx_as_written_lowers() {
    let corpus = ptx_corpus();
    assert!(corpus.len() >= 5, "only {} PTX files", corpus.len());
    let lowered: usize = corpus
        .iter()
        .map(|(path, text)| {
            exercise_ptx(text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
        })
        .sum();
    // Every kernel of every PTX file, those calling `.func`s included.
    assert!(lowered >= 43, "{lowered} kernels lowered");
}

#[test]
fn mutated_ptx_never_panics() {
    let strategy = (
        any::<prop::sample::Index>(),
        prop::collection::vec(mutation(), 1..4),
    )
        .prop_map(|(file, mutations)| {
            let corpus = ptx_corpus();
            let (_, text) = &corpus[file.index(corpus.len())];
            mutations
                .iter()
                .fold(text.clone(), |text, mutation| mutate(&text, mutation))
        });
    let mut runner = TestRunner::new(Config {
        cases: 64,
        ..config()
    });
    let result = runner.run(&strategy, |text| exercise_ptx(&text).map(|_| ()));
    if let Err(error) = result {
        panic!("mutated PTX: {error}");
    }
}
