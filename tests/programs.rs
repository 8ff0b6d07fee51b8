//! File-driven tests: every program in `programs/*/` runs, and what warpsim
//! prints about it (its `printf` output, the report table, the final
//! buffers' digests, the failure if any) must equal the `.report` file kept
//! beside the launch file.
//! `WARPSIM_BLESS=1 cargo test --test programs` rewrites the `.report` files.
//! The same run with 1 and with 2 host threads must give identical JSON
//! reports and buffers.

mod support;

use support::{check_expected, digest, launch_files, repo_root};

fn render(launch: &std::path::Path, host_threads: usize) -> (String, String) {
    let config = warpsim_driver::load_config(None).unwrap();
    let prepared = warpsim_driver::prepare(launch, config)
        .unwrap_or_else(|error| panic!("{}: {error}", launch.display()));
    let mut result = prepared.execute(host_threads).unwrap();
    // Paths in expected files are relative to the repository root.
    let root = format!("{}/", repo_root().display());
    result.report = support::relative_to_root(result.report);
    let mut text = String::from_utf8_lossy(&result.printed).into_owned();
    text.push_str(&result.report.to_table());
    text.push('\n');
    for (name, bytes) in &result.buffers() {
        text.push_str(&format!(
            "buffer {name}: {} bytes, fnv1a {:016x}\n",
            bytes.len(),
            digest(bytes)
        ));
    }
    if let Some(failure) = &result.failure {
        text.push('\n');
        text.push_str(&failure.replace(&root, ""));
    }
    (text, result.report.to_json())
}

#[test]
fn every_program_prints_its_expected_report() {
    let launches = launch_files();
    assert!(
        launches.len() >= 17,
        "only {} programs found",
        launches.len()
    );
    let mut failures = Vec::new();
    for launch in &launches {
        let (text, _) = render(launch, 2);
        if let Some(difference) = check_expected(&launch.with_extension("report"), &text) {
            failures.push(difference);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn reports_do_not_depend_on_the_number_of_host_threads() {
    for launch in launch_files() {
        let one = render(&launch, 1);
        let two = render(&launch, 2);
        let three = render(&launch, 3);
        assert_eq!(one, two, "{}", launch.display());
        assert_eq!(one, three, "{}", launch.display());
    }
}
