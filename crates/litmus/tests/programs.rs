//! Every file of the project's `programs/litmus` directory parses and expands, and for every
//! test that states an `expect`, the model agrees: some allowed outcome matches `[exists]`
//! exactly when the file says "allowed".

use std::path::{Path, PathBuf};
use std::time::Instant;

use warpsim_litmus::{allowed_outcomes, parse_file, Expectation, DEFAULT_BOUND};

fn litmus_directory() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../programs/litmus")
}

#[test]
fn every_program_parses_and_meets_its_expectations() {
    let directory = litmus_directory();
    let Ok(entries) = std::fs::read_dir(&directory) else {
        eprintln!("{} does not exist; nothing to check", directory.display());
        return;
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "litmus")
        })
        .collect();
    paths.sort();
    assert!(
        !paths.is_empty(),
        "{} holds no .litmus file",
        directory.display()
    );

    let started = Instant::now();
    let mut problems = Vec::new();
    let mut checked = 0;
    for path in &paths {
        let text = std::fs::read_to_string(path).unwrap();
        let relative = Path::new("programs/litmus").join(path.file_name().unwrap());
        let file = match parse_file(&relative, &text) {
            Ok(file) => file,
            Err(error) => {
                problems.push(error.to_string());
                continue;
            }
        };
        let tests = match file.expand() {
            Ok(tests) => tests,
            Err(error) => {
                problems.push(error.to_string());
                continue;
            }
        };
        assert!(
            !tests.is_empty(),
            "{} expands to no test",
            relative.display()
        );
        for test in tests {
            let outcomes = match allowed_outcomes(&test, DEFAULT_BOUND) {
                Ok(outcomes) => outcomes,
                Err(error) => {
                    problems.push(format!("{}: {error}", test.name));
                    continue;
                }
            };
            assert!(
                !outcomes.is_empty(),
                "{}: the model allows no outcome at all",
                test.name
            );
            let Some(expect) = test.expect else {
                continue;
            };
            checked += 1;
            let witness = outcomes.iter().find(|outcome| test.matches_exists(outcome));
            match (expect, witness) {
                (Expectation::Allowed, None) => problems.push(format!(
                    "{} ({}): the file expects the outcome to be allowed, but the model forbids it",
                    test.name,
                    relative.display()
                )),
                (Expectation::Forbidden, Some(outcome)) => problems.push(format!(
                    "{} ({}): the file expects the outcome to be forbidden, but the model allows {}",
                    test.name,
                    relative.display(),
                    test.describe(outcome)
                )),
                _ => {}
            }
        }
    }
    eprintln!(
        "checked {checked} expectations in {} files in {:.2?}",
        paths.len(),
        started.elapsed()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
