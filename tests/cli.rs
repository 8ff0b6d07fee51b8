//! Tests of the `warpsim` command as a user runs it: the bad-input corpus of
//! `tests/fail/` (every case's exit code and exact stderr, see its README),
//! then the options of `warpsim run` and `warpsim print` on good programs.
//! `WARPSIM_BLESS=1 cargo test -p warpsim --test cli` rewrites the `.stderr`
//! files of the corpus.

#[allow(unused_imports)]
mod support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use support::{check_expected, repo_root, u32s};

/// The `warpsim` binary, with a logging environment that cannot change what
/// it prints.
fn warpsim() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_warpsim"));
    command.env_remove("RUST_LOG").env_remove("RUST_BACKTRACE");
    command
}

/// Runs `warpsim ARGS` in `dir`.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    warpsim()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("warpsim starts")
}

/// Runs `warpsim ARGS` in the repository root.
fn run(args: &[&str]) -> Output {
    run_in(&repo_root(), args)
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8")
}

/// A fresh scratch directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cli")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the scratch directory can be made");
    dir
}

fn assert_no_panic(output: &Output, what: &str) {
    let text = stderr(output);
    assert!(
        !text.contains("panicked") && !text.contains("RUST_BACKTRACE"),
        "{what}: warpsim panicked:\n{text}"
    );
}

// ---------------------------------------------------------------------------
// The corpus of bad inputs.

fn fail_dir() -> PathBuf {
    repo_root().join("tests/fail")
}

/// One case of `tests/fail/`.
#[derive(Clone, Debug)]
struct Case {
    name: String,
    /// The command line, relative to `tests/fail/`.
    args: Vec<String>,
    /// The files that make up the case (where `<- here` markers are looked for).
    files: Vec<String>,
}

/// Every case: `NAME.toml` (not `*.sim.toml`) is run, with
/// `--config NAME.sim.toml` when that exists; `NAME.kir` without a
/// `NAME.toml` is printed. `data/` holds what cases share.
fn cases() -> Vec<Case> {
    let dir = fail_dir();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("tests/fail exists")
        .map(|entry| entry.expect("a directory entry").file_name())
        .filter_map(|name| name.to_str().map(str::to_string))
        .collect();
    names.sort();
    let mut cases = Vec::new();
    for file in &names {
        if file.ends_with(".sim.toml") {
            continue;
        }
        if let Some(stem) = file.strip_suffix(".toml") {
            let mut args = vec!["run".to_string(), file.clone()];
            let mut files = vec![file.clone()];
            let config = format!("{stem}.sim.toml");
            if dir.join(&config).exists() {
                args.extend(["--config".to_string(), config.clone()]);
                files.push(config);
            }
            for source in [format!("{stem}.kir"), format!("{stem}.cu")] {
                if dir.join(&source).exists() {
                    files.push(source);
                }
            }
            cases.push(Case {
                name: stem.to_string(),
                args,
                files,
            });
        } else if let Some(stem) = file.strip_suffix(".kir") {
            if !dir.join(format!("{stem}.toml")).exists() {
                cases.push(Case {
                    name: stem.to_string(),
                    args: vec!["print".to_string(), file.clone()],
                    files: vec![file.clone()],
                });
            }
        }
    }
    cases
}

fn case(name: &str) -> Case {
    cases()
        .into_iter()
        .find(|case| case.name == name)
        .unwrap_or_else(|| panic!("no case `{name}` in tests/fail"))
}

/// What a case printed, in the form of its `.stderr` file.
fn run_case(case: &Case) -> (Output, String) {
    let args: Vec<&str> = case.args.iter().map(String::as_str).collect();
    let output = run_in(&fail_dir(), &args);
    let code = match output.status.code() {
        Some(code) => code.to_string(),
        None => format!("none ({})", output.status),
    };
    let text = format!("exit code: {code}\n{}", stderr(&output));
    (output, text)
}

#[test]
fn every_bad_input_prints_its_expected_error() {
    let cases = cases();
    assert!(
        cases.len() >= 30,
        "only {} cases in tests/fail",
        cases.len()
    );
    let mut failures = Vec::new();
    for case in &cases {
        let (output, text) = run_case(case);
        assert_no_panic(&output, &case.name);
        // The prefix says what kind of failure it is: a kernel fault exits
        // with 1, every kind of bad input with 2.
        let expected_code = if case.name.starts_with("fault_") {
            1
        } else {
            2
        };
        if output.status.code() != Some(expected_code) {
            failures.push(format!(
                "{}: exit code {:?}, expected {expected_code}",
                case.name,
                output.status.code()
            ));
        }
        let expected = fail_dir().join(format!("{}.stderr", case.name));
        if let Some(difference) = check_expected(&expected, &text) {
            failures.push(difference);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_expected_error_file_belongs_to_a_case() {
    let names: Vec<String> = cases().into_iter().map(|case| case.name).collect();
    for entry in std::fs::read_dir(fail_dir()).unwrap() {
        let file = entry.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(stem) = file.strip_suffix(".stderr") {
            assert!(
                names.iter().any(|name| name == stem),
                "tests/fail/{file} has no case beside it"
            );
        }
    }
}

#[test]
fn the_corpus_baseline_runs() {
    // The launch-file cases each change one thing of this launch.
    let output = run_in(&fail_dir(), &["run", "data/good.toml"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stderr(&output), "");
}

/// A line marked `<- here` in a case's files: the message must name it and
/// show it.
struct Marker {
    file: String,
    line: usize,
    /// The line's text before the marker's comment, trimmed.
    code: String,
}

fn markers(case: &Case) -> Vec<Marker> {
    let mut markers = Vec::new();
    for file in &case.files {
        let text = std::fs::read_to_string(fail_dir().join(file)).unwrap();
        for (index, line) in text.lines().enumerate() {
            let Some(at) = line.find("<- here") else {
                continue;
            };
            let before = &line[..at];
            let comment = [before.rfind("//"), before.rfind('#')]
                .into_iter()
                .flatten()
                .max()
                .unwrap_or(at);
            markers.push(Marker {
                file: file.clone(),
                line: index + 1,
                code: line[..comment].trim().to_string(),
            });
        }
    }
    markers
}

/// How the message of `case` falls short of pointing at its marked lines.
fn marker_problems(case: &Case) -> Vec<String> {
    let (_, text) = run_case(case);
    let mut problems = Vec::new();
    for marker in markers(case) {
        let file = &marker.file;
        let line = marker.line;
        let named = text.contains(&format!("{file}:{line}:"))
            || text.contains(&format!("{file}:{line}\n"))
            || (text.contains(&format!("─ {file}:"))
                && text
                    .lines()
                    .any(|l| l.trim_start().starts_with(&format!("{line} │"))));
        if !named {
            problems.push(format!("{}: does not name {file}:{line}", case.name));
        }
        if !marker.code.is_empty() && !text.contains(&marker.code) {
            problems.push(format!(
                "{}: does not show line {line} of {file}: `{}`",
                case.name, marker.code
            ));
        }
    }
    problems
}

/// Cases whose messages do not (yet) name or show the line at fault; see
/// `launch_and_config_errors_point_at_their_line`. Every case does now.
const UNLOCATED: &[&str] = &[];

#[test]
fn messages_name_and_show_the_marked_lines() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for case in cases() {
        if UNLOCATED.contains(&case.name.as_str()) {
            continue;
        }
        checked += markers(&case).len();
        problems.extend(marker_problems(&case));
    }
    assert!(checked >= 40, "only {checked} marked lines");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn launch_and_config_errors_point_at_their_line() {
    // Every launch-file and machine-configuration case marks the line at
    // fault, and its message names and shows it.
    let mut problems = Vec::new();
    for case in cases() {
        if !(case.name.starts_with("launch_") || case.name.starts_with("config_")) {
            continue;
        }
        if markers(&case).is_empty() {
            problems.push(format!("{}: no line is marked `<- here`", case.name));
        }
        problems.extend(marker_problems(&case));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn launch_errors_from_the_machine_also_show_the_declaration() {
    // Too much static shared memory: the launch's `kernel` and the variable.
    let (_, text) = run_case(&case("launch_too_much_static_shared"));
    assert!(
        text.contains("launch_too_much_static_shared.toml:2:1"),
        "{text}"
    );
    assert!(text.contains("data/good.kir:43:5"), "{text}");
    assert!(text.contains("`big` takes 65536 bytes"), "{text}");
}

/// What a message about a line of megabytes must look like: no longer than
/// a screen, every source line cut to [`MAX_SOURCE_COLUMNS`] characters
/// (plus the gutter), the location giving `file:line:column` of the real
/// line, and the first caret under `marked`, the text at fault.
fn assert_cut_around(text: &str, location: &str, marked: &str) {
    use warpsim_driver::long_lines::{MAX_MESSAGE_CHARS, MAX_SOURCE_COLUMNS};
    assert!(text.len() < 4 * MAX_MESSAGE_CHARS, "{} bytes", text.len());
    for line in text.lines() {
        assert!(line.chars().count() <= MAX_MESSAGE_CHARS + 40, "{line}");
    }
    assert!(text.contains(location), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    let source = lines
        .iter()
        .position(|line| line.contains(" │ ") && line.contains(marked))
        .unwrap_or_else(|| panic!("no source line shows `{marked}`:\n{text}"));
    let shown = lines[source];
    let gutter = shown.find('│').unwrap() + '│'.len_utf8();
    assert!(
        shown[gutter..].chars().count() <= MAX_SOURCE_COLUMNS + 1,
        "{shown}"
    );
    assert!(shown.contains('…'), "{shown}");
    let carets = lines[source + 1];
    let caret_column = carets.chars().position(|c| c == '^').expect("carets");
    let marked_column = shown[..shown.find(marked).unwrap()].chars().count();
    assert_eq!(caret_column, marked_column, "\n{shown}\n{carets}");
}

/// An error at the end of a line of 3 MB (generated code on one line) shows
/// the end of that line, not the whole of it: in `.kir` and in PTX.
#[test]
fn an_error_in_a_3_mb_line_shows_a_screen_of_it() {
    let dir = scratch("three_mb_line");
    let statements = "mov.u32 %r1, 1; ".repeat(200_000);
    let long_line = format!("    {statements}frobnicate.u32 %r1;");
    let column = long_line.find("frobnicate").unwrap() + 1;
    std::fs::write(
        dir.join("long.kir"),
        format!(".kernel k()\n{{\n    .reg .u32 %r1;\n{long_line}\n    exit;\n}}\n"),
    )
    .unwrap();
    std::fs::write(
        dir.join("long.ptx"),
        format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n\n.visible .entry k()\n{{\n    .reg .b32 %r<2>;\n{long_line}\n    ret;\n}}\n"
        ),
    )
    .unwrap();
    for (file, line) in [("long.kir", 4), ("long.ptx", 8)] {
        for command in ["print", "check"] {
            let output = run_in(&dir, &[command, file]);
            assert_eq!(output.status.code(), Some(2), "{command} {file}");
            assert_no_panic(&output, file);
            let text = stderr(&output);
            assert!(text.contains("unknown instruction `frobnicate`"), "{text}");
            assert_cut_around(&text, &format!("{file}:{line}:{column}"), "frobnicate.u32");
        }
    }
}

/// A value at fault in the middle of a long TOML line: both ends of the
/// line are cut, the caret stays under the value.
#[test]
fn an_error_in_a_long_toml_line_shows_a_screen_of_it() {
    let dir = scratch("long_toml_line");
    std::fs::copy(fail_dir().join("data/good.kir"), dir.join("good.kir")).unwrap();
    let ones = vec!["1"; 400_000].join(", ");
    let init_line = format!("init = [{ones}, \"x\", {ones}]");
    let column = init_line.find("\"x\"").unwrap() + 1;
    std::fs::write(
        dir.join("long.toml"),
        format!(
            "source = \"good.kir\"\nkernel = \"scale\"\ngrid = [1]\nblock = [32]\nargs = [\"data\", 32, 2.0]\n\n[buffers.data]\ntype = \"i32\"\n{init_line}\n"
        ),
    )
    .unwrap();
    let output = run_in(&dir, &["run", "long.toml"]);
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert!(text.contains("holds numbers, not \"x\""), "{text}");
    assert_cut_around(&text, &format!("long.toml:9:{column}"), "\"x\"");
    let shown = text
        .lines()
        .find(|line| line.contains("\"x\"") && line.contains(" │ "));
    assert!(shown.unwrap().contains("│ …1, 1"), "{text}");

    // A name of 3 MB quoted by a message is cut in the message too.
    let name = "k".repeat(3_000_000);
    std::fs::write(
        dir.join("name.toml"),
        format!(
            "source = \"good.kir\"\nkernel = \"{name}\"\ngrid = [1]\nblock = [32]\nargs = []\n"
        ),
    )
    .unwrap();
    let output = run_in(&dir, &["run", "name.toml"]);
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert!(text.contains("characters left out"), "{text}");
    assert_cut_around(&text, "name.toml:2:", "kernel = \"kkk");
}

#[test]
fn a_missing_semicolon_is_reported_where_it_is_missing() {
    let problems = marker_problems(&case("parse_missing_semicolon"));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let (_, text) = run_case(&case("parse_missing_semicolon"));
    assert!(text.contains("parse_missing_semicolon.kir:4:19"), "{text}");
}

#[test]
fn a_long_0d_literal_gets_the_digit_count_message() {
    let (_, text) = run_case(&case("lex_f64_digit_count"));
    assert!(
        text.contains("a `0d` float literal needs exactly 16 hex digits"),
        "{text}"
    );
}

#[test]
fn bad_arguments_and_inits_say_what_is_accepted() {
    let (_, text) = run_case(&case("launch_bad_argument"));
    assert!(!text.contains("untagged enum"), "{text}");
    assert!(text.contains("buffer") && text.contains("number"), "{text}");
    let (_, text) = run_case(&case("launch_unknown_init"));
    assert!(!text.contains("untagged enum"), "{text}");
    for form in ["zero", "iota", "fill", "random", "file"] {
        assert!(text.contains(form), "does not mention `{form}`: {text}");
    }
}

#[test]
fn init_file_length_message_spells_the_type_as_launch_files_do() {
    let (_, text) = run_case(&case("launch_init_file_length"));
    assert!(text.contains("32 elements of f32 take 128"), "{text}");
}

#[test]
fn a_misaligned_global_access_names_its_buffer_and_offset() {
    let (_, text) = run_case(&case("fault_misaligned_load"));
    assert!(
        text.contains("at address 0x10000000002 (offset 2 of buffer `data`)"),
        "{text}"
    );
}

#[test]
fn a_source_without_kernels_says_so() {
    let (_, text) = run_case(&case("launch_source_defines_no_kernel"));
    assert!(text.contains("the file defines no kernel"), "{text}");
    assert!(!text.contains("it has:"), "{text}");
}

#[test]
fn problems_in_several_kernels_are_problems_of_the_source() {
    let (_, text) = run_case(&case("verify_several_problems"));
    assert!(
        text.ends_with("error: the source has 8 problems\n"),
        "{text}"
    );
}

#[test]
fn fault_messages_name_the_block_and_thread() {
    let expectations = [
        (
            "fault_out_of_bounds_global_store",
            "in block (1,0,0), thread (7,0,0) (warp 0, lane 7)",
        ),
        (
            "fault_out_of_bounds_shared_load",
            "in block (0,0,0), thread (31,0,0) (warp 0, lane 31)",
        ),
        (
            "fault_misaligned_load",
            "in block (0,0,0), thread (0,0,0) (warp 0, lane 0)",
        ),
    ];
    for (name, place) in expectations {
        let (_, text) = run_case(&case(name));
        assert!(text.starts_with("exit code: 1\n"), "{text}");
        assert!(text.contains(place), "{name}: no `{place}` in\n{text}");
    }
}

#[test]
fn a_deadlock_lists_every_stuck_warp_and_the_barrier_counts() {
    let (_, text) = run_case(&case("fault_deadlock"));
    for expected in [
        "deadlock",
        "block (0,0,0)",
        "fault_deadlock.kir:10",
        "stuck here: warp 1, lanes 0-31: waiting at barrier 2",
        "stuck here: warp 0, lanes 0-31: waiting at barrier 1",
        "barrier 1: 32 of 64 expected threads have arrived",
        "barrier 2: 32 of 64 expected threads have arrived",
    ] {
        assert!(text.contains(expected), "no `{expected}` in\n{text}");
    }
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("13 │")),
        "{text}"
    );
}

#[test]
fn a_runaway_loop_stops_at_the_configured_limit() {
    let (_, text) = run_case(&case("fault_instruction_limit"));
    assert!(text.starts_with("exit code: 1\n"), "{text}");
    assert!(text.contains("more than 10000 warp instructions"), "{text}");
    assert!(text.contains("stuck here: warp 0"), "{text}");
    assert!(text.contains("stuck here: warp 1"), "{text}");
}

#[test]
fn a_failed_kernel_still_writes_its_json_report_table_and_dumps() {
    let dir = scratch("failed_reports");
    let fault_cases: Vec<Case> = cases()
        .into_iter()
        .filter(|case| case.name.starts_with("fault_"))
        .collect();
    assert!(fault_cases.len() >= 5);
    for case in fault_cases {
        let json = dir.join(format!("{}.json", case.name));
        let mut args: Vec<String> = case.args.clone();
        args.extend(["--json".to_string(), json.display().to_string()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = run_in(&fail_dir(), &args);
        assert_eq!(output.status.code(), Some(1), "{}", case.name);
        let report: Value = serde_json::from_str(
            &std::fs::read_to_string(&json)
                .unwrap_or_else(|_| panic!("{}: no JSON report", case.name)),
        )
        .unwrap_or_else(|error| panic!("{}: invalid JSON: {error}", case.name));
        assert_eq!(report["status"], "failed", "{}", case.name);
        let error = report["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{}: `error` is not a string", case.name));
        assert!(error.contains("block ("), "{}: {error}", case.name);
        // The table still goes to stdout, with the failure at its end.
        let table = stdout(&output);
        assert!(
            table.contains("warp_instructions"),
            "{}: {table}",
            case.name
        );
        assert!(table.contains("status: failed"), "{}: {table}", case.name);
    }

    // The fault's place, in the report's one-line form.
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("fault_out_of_bounds_global_store.json")).unwrap(),
    )
    .unwrap();
    let error = report["error"].as_str().unwrap();
    assert!(
        error.starts_with(
            "fault_out_of_bounds_global_store.kir:11: block (1,0,0), thread (7,0,0): out-of-bounds"
        ),
        "{error}"
    );
    assert_eq!(report["failed_blocks"], 1);
    assert_eq!(report["blocks_run"], 2);

    // Dumps are written too: block 0 stored its eight values.
    let dump = dir.join("out.bin");
    let dump_arg = format!("out={}", dump.display());
    let output = run_in(
        &fail_dir(),
        &[
            "run",
            "fault_out_of_bounds_global_store.toml",
            "--dump",
            &dump_arg,
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    let bytes = std::fs::read(&dump).expect("the dump is written");
    assert_eq!(bytes.len(), 60);
    assert_eq!(&u32s(&bytes)[..8], &[0, 1, 2, 3, 4, 5, 6, 7]);
}

/// Runs `warpsim ARGS` in `dir` with at most 4 GiB of address space, so
/// that a runaway allocation fails instead of swapping.
fn run_limited(dir: &Path, args: &[&str]) -> Output {
    run_with_address_space(dir, 4 << 20, args)
}

/// Runs `warpsim ARGS` in `dir` with at most `kib` KiB of address space.
fn run_with_address_space(dir: &Path, kib: u64, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {kib}; exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_warpsim"))
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .output()
        .expect("sh starts")
}

#[test]
fn huge_local_memory_is_refused_as_bad_input() {
    let output = run_limited(&fail_dir().join("bugs"), &["run", "local_1gib.toml"]);
    assert_no_panic(&output, "local_1gib");
    assert!(
        !stderr(&output).contains("memory allocation"),
        "{}",
        stderr(&output)
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("local"), "{}", stderr(&output));
}

#[test]
fn a_local_array_of_4_gib_is_refused_not_truncated() {
    let output = run_limited(&fail_dir().join("bugs"), &["run", "local_wraps.toml"]);
    assert_no_panic(&output, "local_wraps");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("local_wraps.kir:4"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_load_at_the_top_of_the_address_space_is_out_of_bounds() {
    let output = run_in(
        &fail_dir().join("bugs"),
        &["run", "global_address_overflow.toml"],
    );
    assert_no_panic(&output, "global_address_overflow");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stderr(&output);
    assert!(
        text.contains("out-of-bounds 4-byte global load at address 0xfffffffffffffffc"),
        "{text}"
    );
    assert!(text.contains("global_address_overflow.kir:8"), "{text}");
}

// ---------------------------------------------------------------------------
// `warpsim run` on good programs.

const SET_ROW_READ_COL: &str = "programs/seed/setRowReadCol.toml";

#[test]
fn a_good_program_exits_0_with_a_table() {
    let output = run(&["run", SET_ROW_READ_COL]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stderr(&output), "");
    let table = stdout(&output);
    // The block's shared memory is the kernel's static `tile`.
    assert!(table.starts_with(
        "setRowReadCol  grid (1,1,1)  block (32,32,1)  shared 4096 B (4096 static + 0 dynamic)  on Hopper (sm_90)  regs 32 (default)\n"
    ));
    assert!(
        table.lines().any(|line| line
            == "shared_ld_bank_conflict                        992  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
        "{table}"
    );
    assert!(table.lines().any(|line| line
        .starts_with("programs/seed/setRowReadCol.kir:41  ld.shared.u32 %value, [%col]")
        && line
            .split_whitespace()
            .collect::<Vec<_>>()
            .ends_with(&["32", "1024", "32", "992", "32.0", "992", "-"])));
}

/// `setRowReadCol`'s instructions as the JSON report must give them: text,
/// line, space, op, executed, threads, wavefronts, ideal wavefronts, bank
/// conflicts, sectors.
#[allow(clippy::type_complexity)]
const SET_ROW_READ_COL_INSTRUCTIONS: &[(
    &str,
    u64,
    Option<&str>,
    Option<&str>,
    u64,
    u64,
    u64,
    u64,
    u64,
    u64,
)] = &[
    // The read of the block's shape comes first: warpsim issues it early,
    // as ptxas issues the constant-bank read it is
    // (docs/timing.md, "Parameters where ptxas reads them").
    (
        "mov.u32 %ntx, %ntid.x",
        29,
        None,
        None,
        32,
        1024,
        0,
        0,
        0,
        0,
    ),
    ("mov.u32 %tile, tile", 26, None, None, 32, 1024, 0, 0, 0, 0),
    ("mov.u32 %tx, %tid.x", 27, None, None, 32, 1024, 0, 0, 0, 0),
    ("mov.u32 %ty, %tid.y", 28, None, None, 32, 1024, 0, 0, 0, 0),
    (
        "mad.lo.u32 %idx, %ty, %ntx, %tx",
        31,
        None,
        None,
        32,
        1024,
        0,
        0,
        0,
        0,
    ),
    (
        "mad.lo.u32 %row, %ty, 32, %tx",
        33,
        None,
        None,
        32,
        1024,
        0,
        0,
        0,
        0,
    ),
    (
        "mad.lo.u32 %row, %row, 4, %tile",
        34,
        None,
        None,
        32,
        1024,
        0,
        0,
        0,
        0,
    ),
    (
        "st.shared.u32 [%row], %idx",
        35,
        Some("shared"),
        Some("st"),
        32,
        1024,
        32,
        32,
        0,
        0,
    ),
    ("bar.sync 0", 37, None, None, 32, 1024, 0, 0, 0, 0),
    (
        "mad.lo.u32 %col, %tx, 32, %ty",
        39,
        None,
        None,
        32,
        1024,
        0,
        0,
        0,
        0,
    ),
    (
        "mad.lo.u32 %col, %col, 4, %tile",
        40,
        None,
        None,
        32,
        1024,
        0,
        0,
        0,
        0,
    ),
    (
        "ld.shared.u32 %value, [%col]",
        41,
        Some("shared"),
        Some("ld"),
        32,
        1024,
        1024,
        32,
        992,
        0,
    ),
    (
        "ld.param.u64 %out, [out]",
        42,
        Some("param"),
        Some("ld"),
        32,
        1024,
        0,
        0,
        0,
        0,
    ),
    (
        "mul.wide.u32 %offset, %idx, 4",
        43,
        None,
        None,
        32,
        1024,
        0,
        0,
        0,
        0,
    ),
    (
        "add.s64 %addr, %out, %offset",
        44,
        None,
        None,
        32,
        1024,
        0,
        0,
        0,
        0,
    ),
    (
        "st.global.u32 [%addr], %value",
        45,
        Some("global"),
        Some("st"),
        32,
        1024,
        0,
        0,
        0,
        128,
    ),
    ("exit", 46, None, None, 32, 1024, 0, 0, 0, 0),
];

fn check_set_row_read_col_json(report: &Value) {
    assert_eq!(report["kernel"], "setRowReadCol");
    assert_eq!(report["source"], "programs/seed/setRowReadCol.kir");
    assert_eq!(report["device"], "Hopper (sm_90)");
    assert_eq!(report["grid"], serde_json::json!([1, 1, 1]));
    assert_eq!(report["block"], serde_json::json!([32, 32, 1]));
    assert_eq!(report["shared_bytes"], 0);
    assert_eq!(report["static_shared_bytes"], 4096);
    assert_eq!(report["status"], "ok");
    assert_eq!(report["error"], Value::Null);
    assert_eq!(report["blocks_run"], 1);
    assert_eq!(report["failed_blocks"], 0);
    let instructions = report["instructions"].as_array().expect("instructions[]");
    assert_eq!(instructions.len(), SET_ROW_READ_COL_INSTRUCTIONS.len());
    for (index, (actual, expected)) in instructions
        .iter()
        .zip(SET_ROW_READ_COL_INSTRUCTIONS)
        .enumerate()
    {
        let &(text, line, space, op, executed, threads, wavefronts, ideal, conflicts, sectors) =
            expected;
        let expected = serde_json::json!({
            "index": index,
            "text": text,
            "file": "programs/seed/setRowReadCol.kir",
            "line": line,
            "space": space,
            "op": op,
            "executed": executed,
            "threads": threads,
            // Every execution of this kernel's memory instructions has lanes
            // active, so each one is a request to the space it names.
            "shared_requests": if space == Some("shared") { executed } else { 0 },
            "global_requests": if space == Some("global") { executed } else { 0 },
            "wavefronts": wavefronts,
            "ideal_wavefronts": ideal,
            "bank_conflicts": conflicts,
            "sectors": sectors,
        });
        // The timing model's part: each issue is one `selected` cycle, and
        // each conflict wavefront one cycle of the shared-memory pipe.
        let mut actual = actual.clone();
        let stalls = actual
            .as_object_mut()
            .and_then(|object| object.remove("stalls"))
            .expect("stalls");
        assert_eq!(stalls["selected"], executed, "instruction {index}");
        let conflict_cycles = actual
            .as_object_mut()
            .and_then(|object| object.remove("conflict_cycles"))
            .expect("conflict_cycles");
        assert_eq!(conflict_cycles, conflicts, "instruction {index}");
        assert_eq!(actual, expected, "instruction {index}");
    }
    let totals = &report["totals"];
    let shared = |requests: u64, wavefronts: u64, ideal: u64, conflicts: u64| {
        serde_json::json!({
            "requests": requests,
            "wavefronts": wavefronts,
            "ideal_wavefronts": ideal,
            "bank_conflicts": conflicts,
        })
    };
    assert_eq!(totals["shared_load"], shared(32, 1024, 32, 992));
    assert_eq!(totals["shared_store"], shared(32, 32, 32, 0));
    assert_eq!(totals["shared_atomic"], shared(0, 0, 0, 0));
    assert_eq!(
        totals["global_load"],
        serde_json::json!({"requests": 0, "sectors": 0})
    );
    assert_eq!(
        totals["global_store"],
        serde_json::json!({"requests": 32, "sectors": 128})
    );
    assert_eq!(totals["warp_instructions"], 544);
    assert_eq!(totals["thread_instructions"], 17408);
    // The rollup per source line: one instruction per line in a `.kir`.
    let line = |line: u32, space: &str, op: &str, counts: [u64; 7]| {
        let [shared_requests, global_requests, wavefronts, ideal, conflicts, sectors, threads] =
            counts;
        serde_json::json!({
            "file": "programs/seed/setRowReadCol.kir",
            "line": line,
            "space": space,
            "op": op,
            "instructions": 1,
            "executed": 32,
            "threads": threads,
            "shared_requests": shared_requests,
            "global_requests": global_requests,
            "wavefronts": wavefronts,
            "ideal_wavefronts": ideal,
            "bank_conflicts": conflicts,
            "sectors": sectors,
        })
    };
    let mut lines = report["lines"].clone();
    for row in lines.as_array_mut().expect("lines[]") {
        let row = row.as_object_mut().expect("a line is an object");
        let stalls = row.remove("stalls").expect("stalls");
        assert_eq!(stalls["selected"], 32);
        let conflicts = row["bank_conflicts"].clone();
        assert_eq!(row.remove("conflict_cycles"), Some(conflicts));
    }
    assert_eq!(
        lines,
        serde_json::json!([
            line(35, "shared", "st", [32, 0, 32, 32, 0, 0, 1024]),
            line(41, "shared", "ld", [32, 0, 1024, 32, 992, 0, 1024]),
            line(45, "global", "st", [0, 32, 0, 0, 0, 128, 1024]),
        ])
    );
}

/// The header of a launch's table, its column titles, and whether it lists
/// instructions (`instruction` column) or source lines (`access` column).
fn table_view(table: &str) -> &'static str {
    // The column titles follow the header line, the timing line and a blank.
    let titles = table.lines().nth(3).unwrap_or_default();
    if titles.contains(" instruction ") {
        "instruction"
    } else if titles.contains(" access ") {
        "line"
    } else {
        panic!("no table:\n{table}")
    }
}

#[test]
fn tables_list_kir_instructions_and_cuda_lines_unless_told() {
    // A `.kir` program lists instructions, a PTX program (compiled from
    // CUDA) its source lines; `--by` chooses either for both.
    let ptx = "programs/cuda/matmulTiled16.toml";
    for (launch, default) in [(SET_ROW_READ_COL, "instruction"), (ptx, "line")] {
        let output = run(&["run", launch]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(table_view(&stdout(&output)), default, "{launch}");
        for by in ["line", "instruction"] {
            let output = run(&["run", launch, "--by", by]);
            assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
            assert_eq!(table_view(&stdout(&output)), by, "{launch} --by {by}");
        }
    }
    // The shared loads of the tiled product's inner loop are one row: the
    // 16 loads of `Bs[k][tx]` and the 16 of `As[ty][k]`, which ptxas merges
    // four by four into 16-byte loads, 20 instructions run 512 times. A
    // scalar load takes one wavefront; a 16-byte load that the 16 threads of
    // a row make from one address takes two, which is also its ideal.
    let table = stdout(&run(&["run", ptx]));
    let row = table
        .lines()
        .find(|line| line.contains(".cu:141") && line.contains("ld.shared"))
        .unwrap_or_else(|| panic!("no row of line 141:\n{table}"));
    let wavefronts = (16 * 512 + 4 * 512 * 2).to_string();
    assert_eq!(
        row.split_whitespace().skip(1).collect::<Vec<_>>(),
        [
            "ld.shared",
            "20",
            &(20 * 512).to_string(),
            &wavefronts,
            &wavefronts,
            "0",
            "1.0",
            // No conflicts, so no conflict cycles.
            "0",
            "-"
        ]
    );
    // Without merging, the 32 loads of the PTX, one wavefront each.
    let output = run(&["run", ptx, "--merge-accesses", "off"]);
    let table = stdout(&output);
    let row = table
        .lines()
        .find(|line| line.contains(".cu:141") && line.contains("ld.shared"))
        .unwrap_or_else(|| panic!("no row of line 141:\n{table}"));
    let unmerged = (32 * 512).to_string();
    assert_eq!(
        row.split_whitespace().skip(1).collect::<Vec<_>>(),
        [
            "ld.shared",
            "32",
            &unmerged,
            &unmerged,
            &unmerged,
            "0",
            "1.0",
            "0",
            "-"
        ]
    );
    let output = run(&["run", SET_ROW_READ_COL, "--by", "function"]);
    assert_eq!(output.status.code(), Some(2));
    assert_no_panic(&output, "--by function");
    assert!(stderr(&output).contains("--by"), "{}", stderr(&output));
}

#[test]
fn the_header_counts_static_and_dynamic_shared_memory() {
    let dynamic = stdout(&run(&["run", "programs/seed/setRowReadColDyn.toml"]));
    assert!(
        dynamic.starts_with(
            "setRowReadColDyn  grid (1,1,1)  block (32,32,1)  shared 4096 B (0 static + 4096 dynamic)  on"
        ),
        "{dynamic}"
    );
    let json: Value = serde_json::from_slice(
        &run(&["run", "programs/seed/setRowReadColDyn.toml", "--json", "-"]).stdout,
    )
    .unwrap();
    assert_eq!(json["shared_bytes"], 4096);
    assert_eq!(json["static_shared_bytes"], 0);
}

// ---------------------------------------------------------------------------
// `warpsim annotate`.

/// A kernel whose instructions are located in two files: its own `.kir`
/// and `helper.cuh` beside it, as CUDA code inlined from a header would be.
fn two_file_kernel(dir: &Path) -> PathBuf {
    std::fs::write(
        dir.join("k.kir"),
        r#".file 1 "helper.cuh"
.kernel k(.param .u64 out)
{
    .shared .align 4 .u32 tile[1024];
    .reg .u32 %tile, %tx, %addr, %value;
    .reg .u64 %out, %gaddr, %offset;
    ld.param.u64 %out, [out];
    mov.u32 %tile, tile;
    mov.u32 %tx, %tid.x;
    mul.wide.u32 %offset, %tx, 4;
    add.u64 %gaddr, %out, %offset;
    st.global.u32 [%gaddr], %tx;
    .loc 1 2
    mad.lo.u32 %addr, %tx, 128, %tile;
    st.shared.u32 [%addr], %tx;
    .loc 1 3
    ld.shared.u32 %value, [%addr];
    exit;
}
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("helper.cuh"),
        "// helper.cuh\ntile[threadIdx.x * 32] = threadIdx.x;\nvalue = tile[threadIdx.x * 32];\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("k.toml"),
        "source = \"k.kir\"\nkernel = \"k\"\ngrid = [1]\nblock = [32]\nargs = [\"out\"]\n[buffers.out]\ntype = \"u32\"\nlen = 32\n",
    )
    .unwrap();
    dir.join("k.toml")
}

#[test]
fn annotate_prints_every_file_with_its_counts_in_the_margin() {
    let dir = scratch("annotate_two_files");
    two_file_kernel(&dir);
    let output = run_in(&dir, &["annotate", "k.toml"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stderr(&output), "");
    let text = stdout(&output);
    assert!(text
        .starts_with("k  grid (1,1,1)  block (32,1,1)  shared 4096 B (4096 static + 0 dynamic)"));
    // Both files, in name order, each line once with its margin.
    let helper = text.find("\nhelper.cuh\n").expect("helper.cuh is shown");
    let kernel = text.find("\nk.kir\n").expect("k.kir is shown");
    assert!(helper < kernel);
    let cells = |needle: &str| -> Vec<String> {
        let line = text
            .lines()
            .find(|line| line.contains(needle))
            .unwrap_or_else(|| panic!("no `{needle}`:\n{text}"));
        line.split('│')
            .next()
            .unwrap()
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    // Line 2 of the header: 32 lanes storing 128 bytes apart, one bank.
    assert_eq!(
        cells("tile[threadIdx.x * 32] = "),
        ["2", "2", "32", "1", "31", "32.0", "!"]
    );
    assert_eq!(
        cells("value = tile["),
        ["3", "2", "32", "1", "31", "32.0", "!"]
    );
    assert_eq!(cells("// helper.cuh"), ["1"]);
    // Line 12 of the kernel: the global store, 4 sectors.
    assert_eq!(cells("st.global.u32"), ["12", "1", "4"]);

    // `--file` picks one file, by its name or the end of its path.
    let only = run_in(&dir, &["annotate", "k.toml", "--file", "helper.cuh"]);
    assert_eq!(only.status.code(), Some(0), "{}", stderr(&only));
    assert!(stdout(&only).contains("\nhelper.cuh\n"));
    assert!(!stdout(&only).contains("k.kir"));
    let unknown = run_in(&dir, &["annotate", "k.toml", "--file", "nosuch.cu"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert_no_panic(&unknown, "--file nosuch.cu");
    assert_eq!(
        stderr(&unknown),
        "error: --file nosuch.cu: the kernel has no counted instructions in such a file; it has them in helper.cuh, k.kir\n"
    );
}

#[test]
fn annotate_skips_a_file_it_cannot_read_with_a_note() {
    let dir = scratch("annotate_unreadable");
    two_file_kernel(&dir);
    std::fs::remove_file(dir.join("helper.cuh")).unwrap();
    let output = run_in(&dir, &["annotate", "k.toml"]);
    assert_no_panic(&output, "a missing helper.cuh");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains("\nk.kir\n"));
    assert!(
        stderr(&output).starts_with("note: cannot read helper.cuh ("),
        "{}",
        stderr(&output)
    );
    // With no file left to show (every instruction placed in the missing
    // header), it is an error.
    let kernel = std::fs::read_to_string(dir.join("k.kir")).unwrap();
    let all_in_header = kernel.replace("    ld.param", "    .loc 1 1\n    ld.param");
    std::fs::write(dir.join("k.kir"), all_in_header).unwrap();
    let output = run_in(&dir, &["annotate", "k.toml"]);
    assert_no_panic(&output, "every line in a missing helper.cuh");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output)
            .starts_with("error: no source file could be read: cannot read helper.cuh ("),
        "{}",
        stderr(&output)
    );
}

#[test]
fn annotate_cuts_long_lines_at_the_width() {
    let output = run(&[
        "annotate",
        "programs/seed/transposeSmemF.toml",
        "--width",
        "90",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    let source = text.lines().skip(4);
    assert!(
        source.clone().all(|line| line.chars().count() <= 90),
        "{text}"
    );
    assert!(source.clone().any(|line| line.ends_with('…')), "{text}");
    let conflicted = text
        .lines()
        .find(|line| line.contains("ld.shared.f32"))
        .unwrap();
    assert!(
        conflicted.contains("3968  32.0") && conflicted.contains("!│"),
        "{conflicted}"
    );
}

#[test]
fn json_to_stdout_replaces_the_table() {
    let output = run(&["run", SET_ROW_READ_COL, "--json", "-"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.starts_with('{'), "not only JSON on stdout:\n{text}");
    let report: Value = serde_json::from_str(&text).expect("stdout is one JSON value");
    check_set_row_read_col_json(&report);
}

#[test]
fn json_to_a_file_keeps_the_table_on_stdout() {
    let dir = scratch("json_file");
    let path = dir.join("report.json");
    let output = run(&["run", SET_ROW_READ_COL, "--json", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("the report is written"))
            .expect("the file is JSON");
    check_set_row_read_col_json(&report);
    let plain = run(&["run", SET_ROW_READ_COL]);
    assert_eq!(stdout(&output), stdout(&plain));
    // The same report as `--json -` gives.
    let to_stdout = run(&["run", SET_ROW_READ_COL, "--json", "-"]);
    assert_eq!(std::fs::read(&path).unwrap(), to_stdout.stdout);
}

#[test]
fn json_to_an_unwritable_path_is_an_error() {
    let output = run(&[
        "run",
        SET_ROW_READ_COL,
        "--json",
        "/nonexistent-directory/report.json",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert_no_panic(&output, "--json /nonexistent-directory/report.json");
    assert!(
        stderr(&output).contains("/nonexistent-directory/report.json"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn dump_writes_the_buffer_bytes() {
    let dir = scratch("dump");
    let path = dir.join("out.bin");
    let spec = format!("out={}", path.display());
    let output = run(&["run", SET_ROW_READ_COL, "--dump", &spec]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let bytes = std::fs::read(&path).expect("the dump is written");
    assert_eq!(bytes.len(), 4096);
    let values = u32s(&bytes);
    for (i, &value) in values.iter().enumerate() {
        let i = i as u32;
        assert_eq!(value, (i % 32) * 32 + i / 32, "out[{i}]");
    }
    assert_eq!(&values[..4], &[0, 32, 64, 96]);
}

#[test]
fn dump_of_an_unknown_buffer_exits_2() {
    let dir = scratch("dump_unknown");
    let path = dir.join("nosuch.bin");
    let spec = format!("nosuch={}", path.display());
    let output = run(&["run", SET_ROW_READ_COL, "--dump", &spec]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stdout(&output), "", "nothing runs");
    assert_eq!(
        stderr(&output),
        "error: --dump nosuch: the launch file has no buffer `nosuch`\n"
    );
    assert!(!path.exists());

    let output = run(&["run", SET_ROW_READ_COL, "--dump", "out"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stderr(&output), "error: --dump out: expected BUFFER=PATH\n");
}

#[test]
fn host_threads_do_not_change_the_output() {
    let dir = scratch("threads");
    for (launch, buffer) in [
        ("programs/seed/reduceShared.toml", "out"),
        ("programs/seed/transposePadF.toml", "B"),
        ("programs/seed/matmulTiled16.toml", "C"),
    ] {
        let mut outputs = Vec::new();
        // `--threads` may not exceed the host's parallelism.
        let host = std::thread::available_parallelism().map_or(1, |n| n.get());
        let counts: &[&str] = if host >= 2 { &["1", "2"] } else { &["1", "1"] };
        for &threads in counts {
            let dump = dir.join(format!("{buffer}-{threads}.bin"));
            let spec = format!("{buffer}={}", dump.display());
            let table = run(&["run", launch, "--threads", threads, "--dump", &spec]);
            assert_eq!(table.status.code(), Some(0), "{}", stderr(&table));
            let json = run(&["run", launch, "--threads", threads, "--json", "-"]);
            assert_eq!(json.status.code(), Some(0), "{}", stderr(&json));
            let dumped = std::fs::read(&dump).expect("the dump is written");
            outputs.push((table.stdout, json.stdout, dumped));
        }
        assert!(
            outputs[0] == outputs[1],
            "{launch}: --threads 1 and 2 differ"
        );
    }
}

#[test]
fn the_repository_sim_toml_is_the_default_machine() {
    let default = run(&["run", SET_ROW_READ_COL, "--json", "-"]);
    let configured = run(&[
        "run",
        SET_ROW_READ_COL,
        "--config",
        "sim.toml",
        "--json",
        "-",
    ]);
    assert_eq!(configured.status.code(), Some(0), "{}", stderr(&configured));
    assert_eq!(default.stdout, configured.stdout);
}

#[test]
fn another_machine_configuration_changes_the_counts() {
    let output = run(&[
        "run",
        "programs/seed/setColReadCol.toml",
        "--config",
        "programs/kepler-8byte.toml",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let table = stdout(&output);
    assert!(table.contains("on Kepler (sm_35), 8-byte banks"), "{table}");
}

#[test]
fn a_closed_stdout_is_not_an_error() {
    let mut child = warpsim()
        .current_dir(repo_root())
        .args(["run", "programs/bench/transposeSmem.toml"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("warpsim starts");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("warpsim ends");
    assert_no_panic(&output, "closed stdout");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stderr(&output), "");
}

#[test]
fn a_closed_stdout_is_not_an_error_for_json_and_print_either() {
    for args in [
        &["run", SET_ROW_READ_COL, "--json", "-"][..],
        &["print", "programs/seed/matmulTiled16.kir"][..],
    ] {
        let mut child = warpsim()
            .current_dir(repo_root())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("warpsim starts");
        drop(child.stdout.take());
        let output = child.wait_with_output().expect("warpsim ends");
        assert_no_panic(&output, &args.join(" "));
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn a_missing_launch_file_exits_2() {
    let output = run(&["run", "nosuch.toml"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with("error: nosuch.toml: cannot read"),
        "{}",
        stderr(&output)
    );
    let output = run(&["run", SET_ROW_READ_COL, "--config", "nosuch.sim.toml"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with("error: nosuch.sim.toml: cannot read"),
        "{}",
        stderr(&output)
    );
    let output = run(&["print", "nosuch.kir"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with("error: cannot read nosuch.kir"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn bad_command_lines_exit_2() {
    for args in [
        &[][..],
        &["frobnicate"][..],
        &["run"][..],
        &["run", SET_ROW_READ_COL, "--threads", "many"][..],
        &["run", SET_ROW_READ_COL, "--no-such-option"][..],
        &["print"][..],
    ] {
        let output = run(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert_no_panic(&output, &format!("{args:?}"));
        assert_eq!(stdout(&output), "", "{args:?}");
    }
}

// ---------------------------------------------------------------------------
// Buffers: inputs, dumps, and what the host can hold.

/// The baseline kernel of `tests/fail/data/good.kir` (it multiplies the first
/// `n` elements of `data` by `factor`), with `buffers` as the launch file's
/// buffer sections, written to `dir/launch.toml`.
fn scale_launch(dir: &Path, n: u32, buffers: &str) -> PathBuf {
    let source = fail_dir().join("data/good.kir");
    let launch = dir.join("launch.toml");
    std::fs::write(
        &launch,
        format!(
            "source = \"{}\"\nkernel = \"scale\"\ngrid = [1]\nblock = [32]\nargs = [\"data\", {n}, 2.0]\n\n{buffers}\n",
            source.display()
        ),
    )
    .unwrap();
    launch
}

/// The header fields and data of an `.npy` file as warpsim writes it
/// (version 1.0): the header text and the bytes after it.
fn read_npy(path: &Path) -> (String, Vec<u8>) {
    let bytes = std::fs::read(path).expect("the .npy file is written");
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00", "{}", path.display());
    let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    assert_eq!((10 + header_len) % 64, 0, "the data is aligned to 64 bytes");
    let header = String::from_utf8(bytes[10..10 + header_len].to_vec()).unwrap();
    assert!(header.ends_with('\n'));
    (
        header.trim_end().to_string(),
        bytes[10 + header_len..].to_vec(),
    )
}

#[test]
fn npy_inputs_and_dumps_round_trip() {
    let dir = scratch("npy_round_trip");
    // data/f32x32.npy is NumPy's own np.save of np.arange(32, dtype=np.float32).
    let input = fail_dir().join("data/f32x32.npy");
    let launch = scale_launch(
        &dir,
        32,
        &format!(
            "[buffers.data]\ntype = \"f32\"\ninit = {{ npy = \"{}\" }}",
            input.display()
        ),
    );
    let npy = dir.join("data.npy");
    let raw = dir.join("data.bin");
    let output = run(&[
        "run",
        launch.to_str().unwrap(),
        "--dump",
        &format!("data={}", npy.display()),
        "--dump",
        &format!("data={}", raw.display()),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let (header, data) = read_npy(&npy);
    assert_eq!(
        header,
        "{'descr': '<f4', 'fortran_order': False, 'shape': (32,), }"
    );
    let expected: Vec<u8> = (0..32)
        .flat_map(|i| (2.0 * i as f32).to_le_bytes())
        .collect();
    assert_eq!(data, expected);
    assert_eq!(
        std::fs::read(&raw).unwrap(),
        expected,
        "other extensions stay raw"
    );

    // The dump reads back as an input: twice doubled.
    let again = scale_launch(
        &dir,
        32,
        &format!(
            "[buffers.data]\ntype = \"f32\"\nlen = 32\ninit = {{ npy = \"{}\" }}",
            npy.display()
        ),
    );
    let output = run(&[
        "run",
        again.to_str().unwrap(),
        "--dump",
        &format!("data={}", raw.display()),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let values = std::fs::read(&raw).unwrap();
    assert_eq!(values[4..8], 4.0f32.to_le_bytes());
    assert_eq!(values[124..], 124.0f32.to_le_bytes());
}

#[test]
fn inline_and_half_buffers_dump_as_their_types() {
    let dir = scratch("half_buffers");
    let launch = scale_launch(
        &dir,
        3,
        "[buffers.data]\ntype = \"f32\"\ninit = [1, 2.5, -3, 4]\n\
         [buffers.half]\ntype = \"f16\"\ninit = [1, 0.1, 65520]\n\
         [buffers.brain]\ntype = \"bf16\"\nlen = 2\ninit = { fill = 1.00390625 }\n\
         [buffers.bytes]\ntype = \"i8\"\ninit = [-1, 127]",
    );
    let mut args = vec!["run".to_string(), launch.display().to_string()];
    for buffer in ["data", "half", "brain", "bytes"] {
        args.push("--dump".to_string());
        args.push(format!(
            "{buffer}={}",
            dir.join(format!("{buffer}.NPY")).display()
        ));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = run(&args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let dumped = |buffer: &str| read_npy(&dir.join(format!("{buffer}.NPY")));
    let (header, data) = dumped("data");
    assert!(
        header.contains("'descr': '<f4'") && header.contains("(4,)"),
        "{header}"
    );
    let floats: Vec<f32> = data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(floats, [2.0, 5.0, -6.0, 4.0]);
    let (header, data) = dumped("half");
    assert!(
        header.contains("'descr': '<f2'") && header.contains("(3,)"),
        "{header}"
    );
    assert_eq!(data, [0x00, 0x3c, 0x66, 0x2e, 0x00, 0x7c]);
    // bfloat16 is written as its bits, `<u2`; 1 + 2^-8 ties to 1.0.
    let (header, data) = dumped("brain");
    assert!(
        header.contains("'descr': '<u2'") && header.contains("(2,)"),
        "{header}"
    );
    assert_eq!(data, [0x80, 0x3f, 0x80, 0x3f]);
    let (header, data) = dumped("bytes");
    assert!(header.contains("'descr': '|i1'"), "{header}");
    assert_eq!(data, [0xff, 0x7f]);
}

#[test]
fn a_fifo_as_an_input_file_is_refused_without_waiting() {
    let dir = scratch("fifo");
    let fifo = dir.join("pipe");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|status| status.success()) {
        return; // No mkfifo here: nothing to test.
    }
    for form in ["file", "npy"] {
        let launch = scale_launch(
            &dir,
            32,
            &format!(
                "[buffers.data]\ntype = \"f32\"\nlen = 32\ninit = {{ {form} = \"{}\" }}",
                fifo.display()
            ),
        );
        // Reading a FIFO without a writer would block for ever: give it
        // ten seconds, then fail the test rather than hang it.
        let mut child = warpsim()
            .args(["run", launch.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("warpsim starts");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("warpsim waited on the FIFO");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(
            stderr(&output)
                .contains("pipe is a FIFO (named pipe); an input file must be a regular file"),
            "{}",
            stderr(&output)
        );
        assert!(stderr(&output).contains("init = {"), "{}", stderr(&output));
    }
}

#[test]
fn outputs_that_cannot_be_written_are_refused_before_the_run() {
    let dir = scratch("unwritable_outputs");
    let json = dir.join("report.json");
    let json_arg = json.display().to_string();
    for args in [
        &["--dump", "out=/nonexistent-directory/out.bin"][..],
        &["--json", "/nonexistent-directory/report.json"][..],
        &[
            "--json",
            &json_arg,
            "--dump",
            "out=/nonexistent-directory/out.npy",
        ][..],
        &["--dump", &format!("out={}", dir.display())][..],
    ] {
        let mut full = vec!["run", SET_ROW_READ_COL];
        full.extend_from_slice(args);
        let output = run(&full);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert_no_panic(&output, &format!("{args:?}"));
        // Nothing ran: no table.
        assert_eq!(stdout(&output), "", "{args:?}");
        let path = args.last().unwrap().trim_start_matches("out=");
        assert!(
            stderr(&output).contains(path),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).starts_with("error: cannot write"),
            "{}",
            stderr(&output)
        );
    }
    // The JSON file opened before the failing dump is not left behind.
    assert!(!json.exists());
    // `check` opens its JSON before running too.
    let output = run(&[
        "check",
        SET_ROW_READ_COL,
        "--json",
        "/nonexistent-directory/report.json",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stdout(&output), "");
}

#[test]
fn threads_above_the_host_parallelism_are_refused() {
    let host = std::thread::available_parallelism().unwrap().get();
    let too_many = (host + 1).to_string();
    for command in ["run", "check"] {
        let output = run(&[command, SET_ROW_READ_COL, "--threads", &too_many]);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert_eq!(stdout(&output), "");
        assert_eq!(
            stderr(&output),
            format!(
                "error: --threads {too_many}: this host runs at most {host} threads at once (0 uses them all)\n"
            )
        );
        let all = run(&[command, SET_ROW_READ_COL, "--threads", &host.to_string()]);
        assert_eq!(all.status.code(), Some(0), "{}", stderr(&all));
    }
}

/// `MemAvailable` of `/proc/meminfo` in bytes, where there is one.
fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text
        .lines()
        .find(|line| line.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[test]
fn buffers_beyond_the_host_memory_are_refused_up_front() {
    let Some(available) = mem_available() else {
        return; // No /proc/meminfo: only the allocation can fail.
    };
    let dir = scratch("host_memory");
    // Buffers of 4 GiB (the most one may hold), more of them than fit.
    let count = available / (4 << 30) + 2;
    let mut buffers = String::from("[buffers.data]\ntype = \"f32\"\nlen = 32\n");
    for index in 0..count {
        buffers.push_str(&format!(
            "[buffers.big{index}]\ntype = \"u32\"\nlen = 1073741824\n"
        ));
    }
    let launch = scale_launch(&dir, 32, &buffers);
    // Were the check missing, the allocation would fail under this limit
    // (with another message) rather than take the host's memory.
    let output = run_limited(&dir, &["run", launch.to_str().unwrap()]);
    assert_no_panic(&output, "host memory");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let text = stderr(&output);
    assert!(
        text.contains(&format!(
            "the {} buffers take {}.0 GiB ({} bytes), more than the ",
            count + 1,
            4 * count,
            (4 << 30) * count + 128
        )),
        "{text}"
    );
    assert!(
        text.contains("of memory this host has available ("),
        "{text}"
    );
    assert!(text.contains("`big0`: 4.0 GiB"), "{text}");
    assert!(
        text.contains("warpsim holds every buffer in host memory"),
        "{text}"
    );
}

#[test]
fn a_buffer_the_host_cannot_allocate_is_an_error_not_an_abort() {
    let dir = scratch("allocation");
    let launch = scale_launch(
        &dir,
        32,
        "[buffers.data]\ntype = \"f32\"\nlen = 32\n[buffers.big]\ntype = \"u8\"\nlen = 3221225472",
    );
    // 3 GiB in an address space of 2 GiB.
    let output = run_with_address_space(&dir, 2 << 20, &["run", launch.to_str().unwrap()]);
    assert_no_panic(&output, "allocation");
    let text = stderr(&output);
    assert!(!text.contains("memory allocation"), "{text}");
    assert_eq!(output.status.code(), Some(2), "{text}");
    // Where the host has less than 3 GiB available, the check before the
    // allocation refuses it instead.
    assert!(
        text.contains("buffer `big`: the host cannot allocate 3221225472 bytes (3.0 GiB)")
            || text.contains("more than the"),
        "{text}"
    );
}

// ---------------------------------------------------------------------------
// `warpsim print`, `--help`, `-v`.

/// Every `.kir` file of `programs/`.
fn program_sources() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = support::launch_files()
        .into_iter()
        .map(|launch| launch.with_extension("kir"))
        .filter(|source| source.exists())
        .collect();
    files.sort();
    files.dedup();
    files
}

#[test]
fn printed_programs_reparse_to_the_same_text() {
    let dir = scratch("print");
    let sources = program_sources();
    assert!(sources.len() >= 17);
    for source in sources {
        let first = run(&["print", source.to_str().unwrap()]);
        assert_eq!(
            first.status.code(),
            Some(0),
            "{}: {}",
            source.display(),
            stderr(&first)
        );
        let printed = dir.join(source.file_name().unwrap());
        std::fs::File::create(&printed)
            .and_then(|mut file| file.write_all(&first.stdout))
            .unwrap();
        let second = run(&["print", printed.to_str().unwrap()]);
        assert_eq!(
            second.status.code(),
            Some(0),
            "{}: {}",
            printed.display(),
            stderr(&second)
        );
        assert_eq!(
            stdout(&first),
            stdout(&second),
            "{}: printing the printed text changes it",
            source.display()
        );
    }
}

#[test]
fn help_works() {
    let output = run(&["--help"]);
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    for expected in ["Usage: warpsim", "run", "print", "--verbose"] {
        assert!(text.contains(expected), "no `{expected}` in\n{text}");
    }
    let output = run(&["run", "--help"]);
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    for expected in ["--config", "--json", "--dump", "--threads", "BUFFER=PATH"] {
        assert!(text.contains(expected), "no `{expected}` in\n{text}");
    }
    let output = run(&["print", "--help"]);
    assert_eq!(output.status.code(), Some(0));
    let output = run(&["--version"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(stdout(&output).starts_with("warpsim "));
}

#[test]
fn verbose_logs_go_to_stderr() {
    let quiet = run(&["run", SET_ROW_READ_COL]);
    let verbose = run(&["-v", "run", SET_ROW_READ_COL]);
    assert_eq!(verbose.status.code(), Some(0));
    assert_eq!(quiet.stdout, verbose.stdout, "-v changes stdout");
    assert!(
        stderr(&verbose).contains("prepared launch"),
        "{}",
        stderr(&verbose)
    );
    assert!(stderr(&verbose).contains("INFO"));
    // `-v` after the subcommand too, and JSON on stdout stays JSON.
    let json = run(&["run", SET_ROW_READ_COL, "-v", "--json", "-"]);
    assert_eq!(json.status.code(), Some(0));
    let report: Value = serde_json::from_str(&stdout(&json)).expect("stdout is JSON");
    check_set_row_read_col_json(&report);
    assert!(stderr(&json).contains("prepared launch"));
    // -vv is debug.
    let debug = run(&["-vv", "run", SET_ROW_READ_COL]);
    assert_eq!(quiet.stdout, debug.stdout);
    assert!(stderr(&debug).contains("DEBUG"), "{}", stderr(&debug));
}

#[test]
fn verbose_logs_to_a_pipe_have_no_colour_codes() {
    let verbose = run(&["-v", "run", SET_ROW_READ_COL]);
    assert!(
        !stderr(&verbose).contains('\u{1b}'),
        "{:?}",
        stderr(&verbose)
    );
}

/// A failed `assert` prints, for each failing thread, the line the CUDA
/// runtime prints: the same lines an H100 printed for the same launch.
#[test]
fn a_failed_assert_prints_what_the_cuda_runtime_prints() {
    let output = run_in(
        &repo_root().join("tests/fail"),
        &["run", "fault_assert.toml"],
    );
    assert_eq!(output.status.code(), Some(1));
    let ours: Vec<String> = stderr(&output)
        .lines()
        .filter(|line| line.contains("Assertion `"))
        .map(str::to_string)
        .collect();
    let hardware = std::fs::read_to_string(
        repo_root().join("programs/runtime/hardware/assertInBlockOne.stderr"),
    )
    .expect("the H100's output");
    let theirs: Vec<String> = hardware.lines().map(str::to_string).collect();
    assert_eq!(ours.len(), 27);
    assert_eq!(ours, theirs);
}

/// Ctrl-C ends a long launch and still prints the report of the blocks run
/// (exit code 130); a launch that will take more than a minute says so first.
#[test]
fn ctrl_c_prints_the_report_so_far() {
    let dir = scratch("ctrl_c");
    let stderr_path = dir.join("stderr");
    let child = warpsim()
        .current_dir(repo_root())
        .args([
            "run",
            "tests/data/spin.kir",
            "--grid",
            "2000000000",
            "--block",
            "32",
            "--arg",
            "u32[32]",
            "--arg",
            "200",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("warpsim starts");
    // Wait for the estimate (a launch of two billion blocks takes hours),
    // then interrupt.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(&stderr_path).unwrap_or_default();
        if text.contains("this launch will take about") {
            assert!(
                text.starts_with("warpsim: ") && text.contains(" of 2000000000 blocks in "),
                "{text}"
            );
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no estimate: {text}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let output = child.wait_with_output().expect("warpsim ends");
    assert_eq!(output.status.code(), Some(130));
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(table.starts_with("spin  grid (2000000000,1,1)"), "{table}");
    let status = table
        .lines()
        .find(|line| line.starts_with("status: interrupted"))
        .unwrap_or_else(|| panic!("no status line:\n{table}"));
    assert!(status.contains("interrupted (Ctrl-C) after "), "{status}");
}

/// A fault ends the kernel as on a GPU: no further blocks start; with
/// --keep-going every block runs.
#[test]
fn a_fault_ends_the_kernel_unless_told_to_keep_going() {
    let json = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "tests/data/spin.kir",
            "--grid",
            "5000",
            "--block",
            "64",
            "--arg",
            "u32[32]",
            "--arg",
            "3",
            "--json",
            "-",
        ];
        args.extend_from_slice(extra);
        let output = warpsim()
            .current_dir(repo_root())
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        serde_json::from_slice::<serde_json::Value>(&output.stdout).expect("JSON")
    };
    // Threads 32-63 store past the 32-element buffer in every block. The
    // GPU holds 32 blocks of 2 warps per SM (its 64 warp slots), 4,224 on
    // 132 SMs: they all start at once, and the 776 blocks that were waiting for room never start.
    // The launch ends with the window in which the first fault happened:
    // the blocks that had not reached their faulting store by then are cut
    // short, as the GPU ends a kernel at its first fault.
    let stopped = json(&[]);
    assert_eq!(stopped["occupancy"]["blocks_per_sm"], 32);
    assert_eq!(stopped["blocks_run"], 32 * 132);
    let failed = stopped["failed_blocks"].as_u64().expect("failed_blocks");
    assert!((1..=32 * 132).contains(&failed), "{failed} blocks failed");
    let all = json(&["--keep-going"]);
    assert_eq!(all["blocks_run"], 5000);
    assert_eq!(all["failed_blocks"], 5000);
}

/// The two warp schedulers (`[sm] scheduler`): with one warp per
/// sub-partition there is nothing to choose between, and the reports are
/// the same; with eight, loose round robin serves other warps before it
/// looks at the one that issued, and the same outputs and counts come out.
/// A wait for a fixed-latency result (the predicate `setp` writes, which
/// the branch after it reads) counts as `stall_wait` under either: the
/// warp waits on its scoreboard whether or not a scheduler looks at it,
/// as Nsight Compute samples it every cycle.
#[test]
fn the_schedulers_agree_on_what_a_warp_waits_for() {
    let dir = scratch("schedulers");
    let sim = std::fs::read_to_string(repo_root().join("sim.toml")).expect("sim.toml");
    let greedy = "scheduler = \"greedy-then-oldest\"";
    assert_eq!(
        sim.matches(greedy).count(),
        1,
        "sim.toml names its scheduler once"
    );
    let round_robin = dir.join("round-robin.toml");
    std::fs::write(
        &round_robin,
        sim.replace(greedy, "scheduler = \"loose-round-robin\""),
    )
    .expect("the machine file can be written");
    let report = |threads: &str, config: Option<&Path>, dump: &Path| -> Value {
        let dump_arg = format!("out={}", dump.display());
        let mut args = vec![
            "run",
            "programs/bench/fmaLoop.kir",
            "--block",
            threads,
            "--arg",
            "out=f32[1024]",
            "--arg",
            "100",
            "--dump",
            &dump_arg,
            "--json",
            "-",
        ];
        let config_path;
        if let Some(config) = config {
            config_path = config.display().to_string();
            args.extend(["--config", &config_path]);
        }
        let output = run(&args);
        assert!(output.status.success(), "{}", stderr(&output));
        serde_json::from_slice(&output.stdout).expect("the report is JSON")
    };
    let instructions = |report: &Value| report["instructions"].as_array().expect("[]").clone();
    // One warp per sub-partition.
    let (greedy_dump, round_robin_dump) = (dir.join("greedy.bin"), dir.join("round-robin.bin"));
    let one_each = report("128", None, &greedy_dump);
    assert_eq!(
        instructions(&report("128", Some(&round_robin), &round_robin_dump)),
        instructions(&one_each)
    );
    // Eight warps per sub-partition.
    let greedy_report = report("1024", None, &greedy_dump);
    let round_robin_report = report("1024", Some(&round_robin), &round_robin_dump);
    assert_eq!(
        std::fs::read(&greedy_dump).expect("dumped"),
        std::fs::read(&round_robin_dump).expect("dumped")
    );
    let (greedy_rows, round_robin_rows) = (
        instructions(&greedy_report),
        instructions(&round_robin_report),
    );
    assert_eq!(greedy_rows.len(), round_robin_rows.len());
    for (greedy_row, round_robin_row) in greedy_rows.iter().zip(&round_robin_rows) {
        for key in ["text", "executed", "threads"] {
            assert_eq!(greedy_row[key], round_robin_row[key]);
        }
    }
    let branch = greedy_rows
        .iter()
        .position(|row| row["text"] == "@%p bra LOOP_END")
        .expect("the loop's exit branch");
    let wait = |rows: &[Value]| rows[branch]["stalls"]["stall_wait"].as_u64().unwrap_or(0);
    assert!(wait(&greedy_rows) > 0);
    assert_eq!(wait(&round_robin_rows), wait(&greedy_rows));
}
