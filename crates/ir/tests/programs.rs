//! Every example program of the repository (`programs/**/*.kir`) parses,
//! verifies, and round-trips through the printer: `parse(print(m)) == m` and
//! `print(parse(print(m))) == print(m)`.

use std::fs;
use std::path::{Path, PathBuf};

/// Fewer programs than this means the directory walk went wrong.
const AT_LEAST: usize = 17;

fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../programs")
}

/// All `.kir` files under `dir`, recursively, in a stable order.
fn find_kir_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("cannot read directory {}: {error}", dir.display()));
    for entry in entries {
        let path = entry
            .unwrap_or_else(|error| panic!("cannot read an entry of {}: {error}", dir.display()))
            .path();
        if path.is_dir() {
            find_kir_files(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "kir") {
            found.push(path);
        }
    }
}

/// Checks one program; on failure, says what went wrong (the caller names the file).
fn check_program(file_name: &str, text: &str) -> Result<(), String> {
    let module = warpsim_ir::parse_module(file_name, text)
        .map_err(|error| format!("does not parse:\n{error}"))?;
    warpsim_ir::verify_module(&module).map_err(|error| format!("does not verify:\n{error}"))?;
    let printed = warpsim_ir::print_module(&module);
    let reparsed = warpsim_ir::parse_module(file_name, &printed).map_err(|error| {
        format!("its printed form does not parse:\n{error}\n--- printed form ---\n{printed}")
    })?;
    if reparsed != module {
        return Err(format!(
            "parse(print(m)) != m\n--- printed form ---\n{printed}\n--- m ---\n{module:#?}\n--- parse(print(m)) ---\n{reparsed:#?}"
        ));
    }
    let reprinted = warpsim_ir::print_module(&reparsed);
    if reprinted != printed {
        return Err(format!(
            "print(parse(print(m))) != print(m)\n--- print(m) ---\n{printed}\n--- print(parse(print(m))) ---\n{reprinted}"
        ));
    }
    Ok(())
}

#[test]
fn every_program_parses_verifies_and_round_trips() {
    let dir = programs_dir();
    let mut files = Vec::new();
    find_kir_files(&dir, &mut files);
    files.sort();
    let mut failures = Vec::new();
    for path in &files {
        let text = fs::read_to_string(path)
            .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
        let file_name = path
            .strip_prefix(&dir)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned();
        if let Err(message) = check_program(&file_name, &text) {
            failures.push(format!("{}: {message}", path.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} programs failed:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
    assert!(
        files.len() >= AT_LEAST,
        "found {} .kir programs under {}, expected at least {AT_LEAST}",
        files.len(),
        dir.display()
    );
}
