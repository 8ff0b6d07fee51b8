//! Bad `.litmus` files: every problem is a [`LitmusError`] naming the file and the line, and no
//! input, however mangled, makes the parser or the checker panic.

use std::path::Path;

use proptest::prelude::*;
use warpsim_litmus::{allowed_outcomes, parse_file, LitmusError, LitmusErrorKind};

const PATH: &str = "programs/litmus/bad.litmus";

/// A valid message-passing file; tests break one line of it at a time.
const VALID: &str = r#"# MP: message passing.
name = "MP"
doc = "T0 writes data then a flag; T1 reads the flag then the data."
placements = ["block", "grid"]
[locations]
x = 0
y = 0
[[thread]]
body = """
{st} [x], 1;     // line 10
{fence}
{st} [y], 1;
"""
[[thread]]
body = """
{ld} r0, [y];    // line 16
{fence}          // dropped where the variant's fence is empty
{ld} r1, [x];    // line 18
"""
[exists]
"1:r0" = 1
"1:r1" = 0

[[variant]]
name = "plain"
st = "st.global.u32"
ld = "ld.global.u32"
fence = ""
expect = "allowed"

[[variant]]
name = "fence.sc.cta"
st = "st.relaxed.gpu.global.u32"
ld = "ld.relaxed.gpu.global.u32"
fence = "fence.sc.cta;"
expect = { block = "forbidden", grid = "allowed" }
"#;

fn parse_error(text: &str) -> LitmusError {
    match parse_file(Path::new(PATH), text) {
        Ok(_) => panic!("the text should not parse:\n{text}"),
        Err(error) => error,
    }
}

/// `VALID` with its `line_number`-th line (1-based) replaced.
fn with_line(line_number: usize, replacement: &str) -> String {
    VALID
        .lines()
        .enumerate()
        .map(|(index, line)| {
            if index + 1 == line_number {
                replacement
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_valid_file_expands_with_names_lines_and_expectations() {
    let file = parse_file(Path::new(PATH), VALID).unwrap();
    assert_eq!(file.name(), "MP");
    let tests = file.expand().unwrap();
    let names: Vec<&str> = tests.iter().map(|test| test.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "MP+plain@block",
            "MP+plain@grid",
            "MP+fence.sc.cta@block",
            "MP+fence.sc.cta@grid"
        ]
    );
    let lines: Vec<Vec<u32>> = tests[2]
        .threads
        .iter()
        .map(|thread| {
            thread
                .instructions
                .iter()
                .map(|instruction| instruction.line)
                .collect()
        })
        .collect();
    assert_eq!(lines, [vec![10, 11, 12], vec![16, 17, 18]]);
    assert_eq!(
        tests[0].threads[1].instructions.len(),
        2,
        "an empty {{fence}} line is dropped"
    );
    assert_eq!(tests[2].threads[0].instructions[1].text, "fence.sc.cta;");
    let expectations: Vec<String> = tests
        .iter()
        .map(|test| format!("{:?}", test.expect))
        .collect();
    assert_eq!(
        expectations,
        [
            "Some(Allowed)",
            "Some(Allowed)",
            "Some(Forbidden)",
            "Some(Allowed)"
        ]
    );
    for test in &tests {
        let weak_allowed = allowed_outcomes(test, 1000)
            .unwrap()
            .iter()
            .any(|outcome| test.matches_exists(outcome));
        assert_eq!(
            weak_allowed,
            test.expect == Some(warpsim_litmus::Expectation::Allowed),
            "{}",
            test.name
        );
    }
}

#[test]
fn an_unknown_instruction_names_its_line() {
    let error = parse_error(&with_line(18, "add.u32 r1, r0, 1;"));
    assert_eq!(error.line, 18);
    assert_eq!(
        error.kind,
        LitmusErrorKind::UnknownInstruction {
            text: "add.u32 r1, r0, 1;".to_string()
        }
    );
    assert_eq!(
        error.to_string(),
        "programs/litmus/bad.litmus:18: unknown instruction `add.u32 r1, r0, 1;`: \
         supported are ld, st, atom, red, fence, membar and bar.sync"
    );
}

#[test]
fn an_undefined_placeholder_names_its_line_and_variant() {
    let error = parse_error(&with_line(11, "{fense}"));
    assert_eq!(error.line, 11);
    assert_eq!(
        error.to_string(),
        "programs/litmus/bad.litmus:11: placeholder `{fense}` is not defined by variant `plain`"
    );
    // `name` and `expect` are not placeholders.
    assert_eq!(parse_error(&with_line(11, "{name}")).line, 11);
    // Without variants nothing defines placeholders.
    let without_variants = VALID.split("[[variant]]").next().unwrap();
    let error = parse_error(without_variants);
    assert_eq!(error.line, 10);
    assert!(
        error.to_string().contains("the file has no [[variant]]"),
        "{error}"
    );
    let error = parse_error(&with_line(12, "{st [y], 1;"));
    assert_eq!(error.line, 12);
    assert!(
        matches!(error.kind, LitmusErrorKind::MalformedPlaceholder { .. }),
        "{error}"
    );
}

#[test]
fn an_unknown_location_names_its_line() {
    let error = parse_error(&with_line(16, "{ld} r0, [flag];"));
    assert_eq!(error.line, 16);
    assert_eq!(
        error.to_string(),
        "programs/litmus/bad.litmus:16: unknown location `flag`; [locations] declares `x`, `y`"
    );
}

#[test]
fn a_bad_register_names_its_line() {
    let error = parse_error(&with_line(18, "{ld} r16, [x];"));
    assert_eq!(error.line, 18);
    assert_eq!(
        error.to_string(),
        "programs/litmus/bad.litmus:18: bad register `r16`: registers are r0 to r15"
    );
    let error = parse_error(&with_line(12, "{st} [y], r2;"));
    assert_eq!(error.line, 12);
    assert_eq!(
        error.kind,
        LitmusErrorKind::RegisterReadBeforeWritten {
            thread: 0,
            register: "r2".to_string()
        }
    );
}

#[test]
fn unsupported_instructions_name_their_line() {
    let error = parse_error(&with_line(27, "ld = \"ld.global.f32\""));
    // The variant's text lands in the bodies, so the error names the body line that uses it.
    assert_eq!(error.line, 16);
    assert!(error.to_string().contains("only .u32 and .b32"), "{error}");
}

#[test]
fn structural_errors_name_their_line() {
    let cases: [(String, u32, &str); 12] = [
        (with_line(6, "x = -1"), 6, "invalid value"),
        (with_line(6, "x = "), 6, ""),
        (with_line(3, "dok = \"typo\""), 3, "unknown field `dok`"),
        (
            with_line(4, "placements = [\"cluster\"]"),
            4,
            "`cluster` is not one of warp, block, grid",
        ),
        (
            with_line(21, "\"1:r7\" = 1"),
            21,
            "thread 1 never writes r7",
        ),
        (
            with_line(21, "\"5:r0\" = 1"),
            21,
            "not a thread of this test",
        ),
        (
            with_line(21, "z = 1"),
            21,
            "neither `thread:register` nor a location",
        ),
        (
            with_line(29, "expect = \"maybe\""),
            29,
            "neither \"allowed\" nor \"forbidden\"",
        ),
        (
            with_line(36, "expect = { warp = \"allowed\" }"),
            36,
            "does not list placement `warp`",
        ),
        (
            with_line(32, "name = \"plain\""),
            31,
            "two variants are named `plain`",
        ),
        (with_line(32, "nom = \"x\""), 31, "needs a `name`"),
        (with_line(35, "fence = 1.5"), 35, "must be a string"),
    ];
    for (text, line, message) in cases {
        let error = parse_error(&text);
        assert_eq!(error.line, line, "{error}");
        assert!(
            error.to_string().contains(message),
            "`{error}` should mention `{message}`"
        );
        assert!(
            error.to_string().starts_with(&format!("{PATH}:{line}: ")),
            "{error}"
        );
    }
}

#[test]
fn placements_and_barriers_are_checked_per_placement() {
    let explicit = VALID.replace(
        "[[thread]]\nbody = \"\"\"\n{ld}",
        "[[thread]]\nplacement = { block = 0, warp = 0, lane = 0 }\nbody = \"\"\"\n{ld}",
    );
    let error = parse_error(&explicit);
    assert!(
        error
            .to_string()
            .contains("puts threads 0 and 1 both at block 0 warp 0 lane 0"),
        "{error}"
    );

    let barrier = with_line(11, "bar.sync 0;");
    let error = parse_error(&barrier);
    assert_eq!(error.line, 11);
    assert!(
        error
            .to_string()
            .contains("at placement `block` thread 0 executes 1 bar.sync but thread 1"),
        "{error}"
    );
    // In the grid placement alone every thread has its own block, so the barrier is fine.
    let grid_only = barrier.replace(
        "placements = [\"block\", \"grid\"]",
        "placements = [\"grid\"]",
    );
    let grid_only = grid_only.replace("expect = { block = \"forbidden\", grid = \"allowed\" }", "");
    assert_eq!(
        parse_file(Path::new(PATH), &grid_only)
            .unwrap()
            .expand()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn toml_syntax_errors_name_their_line() {
    let error = parse_error(&with_line(22, "\"1:r1\" = = 0"));
    assert_eq!(error.line, 22);
    assert!(matches!(error.kind, LitmusErrorKind::Toml { .. }));
}

/// Replaces, inserts or deletes characters of `VALID` at the given places.
fn mutate(edits: &[(usize, u8, char)]) -> String {
    let mut characters: Vec<char> = VALID.chars().collect();
    for &(position, action, character) in edits {
        let position = position % (characters.len() + 1);
        match action % 3 {
            0 if position < characters.len() => characters[position] = character,
            1 => characters.insert(position, character),
            _ if position < characters.len() => {
                characters.remove(position);
            }
            _ => {}
        }
    }
    characters.into_iter().collect()
}

fn interesting_character() -> impl Strategy<Value = char> {
    prop_oneof![
        prop::sample::select(vec![
            '{', '}', '[', ']', '"', '\'', ';', ',', '.', ':', '=', '\n', ' ', '/', '0', '1', '9',
            '-', 'r', 'x', '#', '\\',
        ]),
        any::<char>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(text in ".{0,400}") {
        let _ = parse_file(Path::new(PATH), &text);
    }

    #[test]
    fn mangled_files_never_panic(edits in prop::collection::vec((0usize..2000, 0u8..3, interesting_character()), 1..8)) {
        let text = mutate(&edits);
        match parse_file(Path::new(PATH), &text) {
            Ok(file) => {
                for test in file.expand().unwrap() {
                    let _ = allowed_outcomes(&test, 100_000);
                }
            }
            Err(error) => {
                prop_assert!(error.line >= 1);
                prop_assert!(error.to_string().starts_with(PATH));
            }
        }
    }
}
