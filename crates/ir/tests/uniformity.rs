//! The static uniformity analysis: which block barriers threads of one block
//! may reach under different control flow, on small kernels written for each
//! rule, and no finding on the correct programs of the repository.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use warpsim_ir::uniformity::{analyze, divergent_barriers, DivergentBarrier};
use warpsim_ir::{parse_module, parse_ptx, verify_module, InstrId, Kernel, Module, RegId};

/// A kernel around `body`, with the registers every test uses declared.
fn kernel_text(body: &str) -> String {
    format!(
        ".kernel k(.param .u32 n, .param .u64 buf)\n{{\n\
         .shared .align 4 .u32 sh[256];\n\
         .reg .u32 %t, %r, %s, %i, %c, %a, %n, %x;\n\
         .reg .u64 %g;\n\
         .reg .pred %p, %q;\n\
         {body}\n}}\n"
    )
}

struct Parsed {
    text: String,
    module: Module,
}

impl Parsed {
    fn new(body: &str) -> Parsed {
        let text = kernel_text(body);
        let module = parse_module("t.kir", &text).unwrap_or_else(|error| panic!("{error}"));
        verify_module(&module).unwrap_or_else(|error| panic!("{error}"));
        Parsed { text, module }
    }

    fn kernel(&self) -> &Kernel {
        &self.module.kernels[0]
    }

    /// The instruction on the line that carries the comment `// @marker`.
    fn at(&self, marker: &str) -> InstrId {
        let tag = format!("// @{marker}");
        let line = self
            .text
            .lines()
            .position(|line| line.trim_end().ends_with(&tag))
            .unwrap_or_else(|| panic!("no line marked {tag}"))
            + 1;
        let index = self
            .kernel()
            .instrs
            .iter()
            .position(|instr| instr.loc.line == line as u32)
            .unwrap_or_else(|| panic!("no instruction on the line marked {tag}"));
        InstrId(index as u32)
    }

    fn findings(&self) -> Vec<DivergentBarrier> {
        divergent_barriers(self.kernel())
    }

    /// Asserts exactly the findings `(barrier, branch)` by marker, and that
    /// each reason mentions `reason`.
    fn expect(&self, expected: &[(&str, &str)], reason: &str) {
        let findings = self.findings();
        let want: Vec<(InstrId, InstrId)> = expected
            .iter()
            .map(|(barrier, branch)| (self.at(barrier), self.at(branch)))
            .collect();
        let got: Vec<(InstrId, InstrId)> = findings
            .iter()
            .map(|finding| (finding.barrier, finding.branch))
            .collect();
        assert_eq!(got, want, "findings: {findings:#?}");
        for finding in &findings {
            assert!(
                finding.reason.contains(reason),
                "the reason {:?} does not mention {reason:?}",
                finding.reason
            );
        }
    }

    /// Asserts exactly one finding, `(barrier, branch)` by marker, whose
    /// skipping threads go straight to the exit.
    fn expect_skipped_by_exit(&self, barrier: &str, branch: &str) {
        let findings = self.findings();
        assert_eq!(findings.len(), 1, "findings: {findings:#?}");
        let finding = &findings[0];
        assert_eq!(
            (finding.barrier, finding.branch, finding.skipped_by_exit),
            (self.at(barrier), self.at(branch), true),
            "findings: {findings:#?}"
        );
    }

    fn expect_none(&self) {
        let findings = self.findings();
        assert!(findings.is_empty(), "unexpected findings: {findings:#?}");
    }
}

#[test]
fn if_else_with_a_barrier_in_each_arm_on_an_odd_thread_index() {
    let kernel = Parsed::new(
        "mov.u32 %t, %tid.x;
         rem.u32 %r, %t, 2;
         setp.eq.u32 %p, %r, 0;
     @%p bra EVEN;                    // @branch
         bar.sync 0;                  // @odd
         bra JOIN;
     EVEN:
         bar.sync 0;                  // @even
     JOIN:
         st.shared.u32 [sh+4], %r;
         exit;",
    );
    kernel.expect(&[("odd", "branch"), ("even", "branch")], "%tid.x");
    let analysis = analyze(kernel.kernel());
    assert!(analysis.is_divergent_branch(kernel.at("branch")));
}

#[test]
fn a_barrier_only_some_threads_reach() {
    // if (tid < 64) __syncthreads(); sh[0] = 1;
    let kernel = Parsed::new(
        "setp.ge.u32 %p, %tid.x, 64;
     @%p bra AFTER;                   // @branch
         bar.sync 0;                  // @sync
     AFTER:
         st.shared.u32 [sh+4], %r;
         st.shared.u32 [sh], 1;
         exit;",
    );
    kernel.expect(&[("sync", "branch")], "%tid.x");
    assert!(kernel
        .findings()
        .iter()
        .all(|finding| !finding.skipped_by_exit));
    // With nothing after the `if`, the skipping threads exit at once. The
    // pruned graph cannot tell this from `if (tid >= 64) return;`, but
    // nothing after the barrier needs it, so it is no early return's: a
    // finding, whose skipping threads exit (GPUVerify's barrier-divergence
    // cases end this way).
    Parsed::new(
        "setp.ge.u32 %p, %tid.x, 64;
     @%p bra AFTER;                   // @branch
         bar.sync 0;                  // @sync
     AFTER:
         exit;",
    )
    .expect_skipped_by_exit("sync", "branch");
}

#[test]
fn a_barrier_in_a_loop_left_for_the_exit_at_different_trip_counts() {
    // for (i = 0; i < tid % 4; i++) { __syncthreads(); } and nothing after:
    // the lanes that leave the loop exit while others go round again.
    Parsed::new(
        "rem.u32 %n, %tid.x, 4;
         mov.u32 %i, 0;
         setp.eq.u32 %q, %n, 0;
     @%q bra DONE;                    // @entry
     LOOP:
         bar.sync 0;                  // @sync
         add.u32 %i, %i, 1;
         setp.lt.u32 %p, %i, %n;
     @%p bra LOOP;
     DONE:
         exit;",
    )
    // The loop's entry test and its latch both send threads to the exit;
    // the nearest branch before the barrier is named.
    .expect_skipped_by_exit("sync", "entry");
    // The same loop with a store before the barrier: the barrier guards the
    // next round's store, which the statics cannot rule out as needed (the
    // machine's checker still sees lanes leave the loop between phases).
    Parsed::new(
        "rem.u32 %n, %tid.x, 4;
         mov.u32 %i, 0;
         setp.eq.u32 %q, %n, 0;
     @%q bra DONE;
     LOOP:
         st.shared.u32 [sh], %i;
         bar.sync 0;
         add.u32 %i, %i, 1;
         setp.lt.u32 %p, %i, %n;
     @%p bra LOOP;
     DONE:
         exit;",
    )
    .expect_none();
}

#[test]
fn threads_that_return_early_are_not_expected_at_the_barrier() {
    // if (tid >= 64) return; __syncthreads();
    Parsed::new(
        "setp.ge.u32 %p, %tid.x, 64;
     @%p bra OUT;
         bar.sync 0;
         st.shared.u32 [sh], 1;
         exit;
     OUT:
         exit;",
    )
    .expect_none();
    // The same with a guarded exit and with a branch to the implicit exit label.
    Parsed::new(
        "setp.ge.u32 %p, %tid.x, 64;
     @%p exit;
         bar.sync 0;
         st.shared.u32 [sh], 1;",
    )
    .expect_none();
    Parsed::new(
        "setp.ge.u32 %p, %tid.x, 64;
     @%p bra END;
         bar.sync 0;
         st.shared.u32 [sh], 1;
     END:",
    )
    .expect_none();
}

#[test]
fn an_early_return_that_does_work_first_is_still_an_early_return() {
    // if (tid >= 64) { sh[1] = tid; return; } __syncthreads(); sh[0] = 1;
    Parsed::new(
        "mov.u32 %t, %tid.x;
         setp.ge.u32 %p, %t, 64;
     @%p bra OUT;
         bar.sync 0;
         st.shared.u32 [sh], 1;
         exit;
     OUT:
         st.shared.u32 [sh+4], %t;
         exit;",
    )
    .expect_none();
    // A return inside a loop: for (i...) { __syncthreads(); if (tid == i) {
    // sh[i] = 1; return; } }
    Parsed::new(
        "ld.param.u32 %n, [n];
         mov.u32 %i, 0;
     LOOP:
         bar.sync 0;
         setp.eq.u32 %p, %tid.x, %i;
     @%p bra OUT;
         add.u32 %i, %i, 1;
         setp.lt.u32 %q, %i, %n;
     @%q bra LOOP;
         st.shared.u32 [sh], %i;
         exit;
     OUT:
         st.shared.u32 [sh+4], %i;
         exit;",
    )
    .expect_none();
    // The side without the barrier may come first in the text: this is
    // if (tid < 64) { sh[0] = 1; return; } __syncthreads();
    Parsed::new(
        "mov.u32 %t, %tid.x;
         setp.ge.u32 %p, %t, 64;
     @%p bra OUT;
         st.shared.u32 [sh], 1;
         exit;
     OUT:
         bar.sync 0;
         st.shared.u32 [sh+4], %t;
         exit;",
    )
    .expect_none();
}

#[test]
fn a_condition_on_a_kernel_parameter_is_uniform() {
    let kernel = Parsed::new(
        "ld.param.u32 %n, [n];
         setp.ge.u32 %p, %n, 64;
     @%p bra AFTER;                   // @branch
         bar.sync 0;
     AFTER:
         st.shared.u32 [sh+4], %r;
         exit;",
    );
    kernel.expect_none();
    assert!(!analyze(kernel.kernel()).is_divergent_branch(kernel.at("branch")));
}

#[test]
fn a_condition_on_the_block_index_is_uniform() {
    Parsed::new(
        "mov.u32 %r, %ctaid.x;
         mov.u32 %s, %ntid.x;
         mul.lo.u32 %r, %r, %s;
         setp.eq.u32 %p, %r, 0;
     @%p bra AFTER;
         bar.sync 0;
     AFTER:
         st.shared.u32 [sh+4], %r;
         exit;",
    )
    .expect_none();
}

#[test]
fn a_loop_with_a_parameter_bound_trip_count_around_a_barrier() {
    Parsed::new(
        "ld.param.u32 %n, [n];
         mov.u32 %i, 0;
     LOOP:
         setp.ge.u32 %p, %i, %n;
     @%p bra DONE;
         bar.sync 0;
         add.u32 %i, %i, 1;
         bra LOOP;
     DONE:
         st.shared.u32 [sh+4], %r;
         exit;",
    )
    .expect_none();
}

#[test]
fn a_loop_whose_trip_count_depends_on_the_thread_around_a_barrier() {
    // for (i = 0; i < tid; i++) __syncthreads();
    let kernel = Parsed::new(
        "mov.u32 %t, %tid.x;
         mov.u32 %i, 0;
     LOOP:
         setp.ge.u32 %p, %i, %t;
     @%p bra DONE;                    // @exit
         bar.sync 0;                  // @sync
         add.u32 %i, %i, 1;
         bra LOOP;
     DONE:
         st.shared.u32 [sh+4], %r;
         exit;",
    );
    kernel.expect(&[("sync", "exit")], "%tid.x");
}

#[test]
fn a_loop_whose_counter_becomes_divergent_only_through_the_loop() {
    // The bound is uniform, but the counter steps by a thread-dependent amount:
    // %i, then %p and the latch become divergent in later rounds of the fixed point.
    let kernel = Parsed::new(
        "ld.param.u32 %n, [n];
         mov.u32 %i, 0;
         and.b32 %x, %tid.x, 3;
     LOOP:
         bar.sync 0;                  // @sync
         add.u32 %i, %i, %x;
         setp.lt.u32 %p, %i, %n;
     @%p bra LOOP;                    // @latch
         st.shared.u32 [sh+4], %i;
         exit;",
    );
    kernel.expect(&[("sync", "latch")], "%tid.x");
}

#[test]
fn unreachable_code_does_not_make_reachable_code_divergent() {
    // %x is assigned from %tid.x only in unreachable code that jumps into the
    // loop, so the loop's counter stays uniform.
    Parsed::new(
        "ld.param.u32 %n, [n];
         mov.u32 %i, 0;
         mov.u32 %x, 1;
     LOOP:
         bar.sync 0;
         add.u32 %i, %i, %x;
         setp.lt.u32 %p, %i, %n;
     @%p bra LOOP;
         st.shared.u32 [sh+4], %i;
         exit;
         mov.u32 %x, %tid.x;
         bra LOOP;",
    )
    .expect_none();
}

#[test]
fn a_divergent_if_nested_in_a_uniform_if_names_the_inner_branch() {
    let kernel = Parsed::new(
        "ld.param.u32 %n, [n];
         setp.eq.u32 %p, %n, 0;
     @%p bra OUTER_END;               // @outer
         setp.lt.u32 %q, %tid.x, 32;
     @%q bra INNER_END;               // @inner
         bar.sync 0;                  // @sync
     INNER_END:
         add.u32 %r, %r, 1;
     OUTER_END:
         st.shared.u32 [sh+4], %r;
         exit;",
    );
    kernel.expect(&[("sync", "inner")], "%tid.x");
}

#[test]
fn a_uniform_if_nested_in_a_divergent_if_depends_on_the_outer_branch() {
    let kernel = Parsed::new(
        "ld.param.u32 %n, [n];
         setp.eq.u32 %q, %n, 0;
         setp.lt.u32 %p, %tid.x, 32;
     @%p bra OUTER_END;               // @outer
     @%q bra INNER_END;               // @inner
         bar.sync 0;                  // @sync
     INNER_END:
         add.u32 %r, %r, 1;
     OUTER_END:
         st.shared.u32 [sh+4], %r;
         exit;",
    );
    kernel.expect(&[("sync", "outer")], "%tid.x");
    let analysis = analyze(kernel.kernel());
    assert!(!analysis.is_divergent_branch(kernel.at("inner")));
    assert!(analysis.is_under_divergent_control(kernel.at("inner")));
}

#[test]
fn a_barrier_after_a_divergent_if_reconverges() {
    let kernel = Parsed::new(
        "setp.ge.u32 %p, %tid.x, 64;
     @%p bra SKIP;                    // @branch
         st.shared.u32 [sh], 1;
     SKIP:
         bar.sync 0;
         exit;",
    );
    kernel.expect_none();
    assert!(analyze(kernel.kernel()).is_divergent_branch(kernel.at("branch")));
}

#[test]
fn divergence_through_a_load_at_a_thread_dependent_address() {
    // %r = sh[tid]; if (%r != 0) __syncthreads();
    let kernel = Parsed::new(
        "mov.u32 %t, %tid.x;
         mov.u32 %a, sh;
         mad.lo.u32 %a, %t, 4, %a;
         ld.shared.u32 %r, [%a];
         setp.eq.u32 %p, %r, 0;
     @%p bra AFTER;                   // @branch
         bar.sync 0;                  // @sync
     AFTER:
         st.shared.u32 [sh+4], %r;
         exit;",
    );
    kernel.expect(&[("sync", "branch")], "%tid.x");
}

#[test]
fn a_load_at_a_uniform_address_is_uniform() {
    // A weak load at one address gives every thread the same value.
    Parsed::new(
        "ld.shared.u32 %r, [sh+8];
         ld.param.u64 %g, [buf];
         ld.global.u32 %s, [%g];
         add.u32 %r, %r, %s;
         setp.eq.u32 %p, %r, 0;
     @%p bra AFTER;
         bar.sync 0;
     AFTER:
         st.shared.u32 [sh+4], %r;
         exit;",
    )
    .expect_none();
}

#[test]
fn divergence_through_control_dependence() {
    // if (tid < 5) c = 1;  ...  if (c) __syncthreads();
    let kernel = Parsed::new(
        "mov.u32 %c, 0;
         setp.ge.u32 %p, %tid.x, 5;
     @%p bra SKIP;                    // @first
         mov.u32 %c, 1;
     SKIP:
         bar.sync 0;                  // @reconverged
         setp.eq.u32 %q, %c, 0;
     @%q bra AFTER;                   // @second
         bar.sync 0;                  // @sync
     AFTER:
         st.shared.u32 [sh+4], %r;
         exit;",
    );
    kernel.expect(&[("sync", "second")], "%c");
    let analysis = analyze(kernel.kernel());
    assert!(analysis.is_divergent_branch(kernel.at("second")));
    let c = kernel
        .kernel()
        .regs
        .iter()
        .position(|reg| reg.name == "%c")
        .unwrap();
    assert!(analysis.is_divergent_reg(warpsim_ir::RegId(c as u32)));
}

#[test]
fn a_reused_predicate_is_tracked_per_program_point() {
    // reduceShared's loop: %p is divergent inside (`tid < s`) but the loop's
    // own exit test writes it anew from the uniform `s` first.
    Parsed::new(
        "mov.u32 %s, %ntid.x;
         shr.u32 %s, %s, 1;
     LOOP:
         setp.eq.u32 %p, %s, 0;
     @%p bra LOOP_END;
         setp.ge.u32 %p, %tid.x, %s;
     @%p bra SKIP;
         st.shared.u32 [sh], 1;
     SKIP:
         bar.sync 0;
         shr.u32 %s, %s, 1;
         bra LOOP;
     LOOP_END:
         st.shared.u32 [sh+4], %r;
         exit;",
    )
    .expect_none();
}

#[test]
fn a_barrier_reduction_gives_every_thread_the_same_result() {
    // do { ...; n = __syncthreads_count(tid < x); } while (n > 0);
    Parsed::new(
        "mov.u32 %x, 0;
     LOOP:
         setp.lt.u32 %q, %tid.x, %x;
         bar.red.popc.u32 %c, 0, %q;
         add.u32 %x, %x, 1;
         bar.sync 0;
         setp.ne.u32 %p, %c, 0;
     @%p bra LOOP;
         st.shared.u32 [sh+4], %r;
         exit;",
    )
    .expect_none();
    Parsed::new(
        "LOOP:
         setp.lt.u32 %q, %tid.x, 7;
         bar.red.or.pred %p, 0, %q;
         bar.sync 0;
     @%p bra LOOP;
         st.shared.u32 [sh+4], %r;
         exit;",
    )
    .expect_none();
}

#[test]
fn polling_a_volatile_flag_around_a_barrier() {
    // while (*flag == 0) __syncthreads();  Threads may see the write at
    // different rounds, so some leave the loop while others wait.
    let kernel = Parsed::new(
        "ld.param.u64 %g, [buf];
     LOOP:
         ld.volatile.global.u32 %r, [%g];
         setp.ne.u32 %p, %r, 0;
     @%p bra DONE;                    // @poll
         bar.sync 0;                  // @sync
         bra LOOP;
     DONE:
         st.shared.u32 [sh+4], %r;
         exit;",
    );
    kernel.expect(&[("sync", "poll")], "volatile");
    // A barrier after the polling loop is reached by every thread, if late.
    Parsed::new(
        "ld.param.u64 %g, [buf];
     LOOP:
         ld.volatile.global.u32 %r, [%g];
         setp.eq.u32 %p, %r, 0;
     @%p bra LOOP;
         bar.sync 0;
         st.shared.u32 [sh+4], %r;
         exit;",
    )
    .expect_none();
    // A strong (relaxed or acquire) load is as divergent as a volatile one.
    Parsed::new(
        "ld.param.u64 %g, [buf];
     LOOP:
         bar.sync 0;                  // @sync
         ld.acquire.gpu.global.u32 %r, [%g];
         setp.eq.u32 %p, %r, 0;
     @%p bra LOOP;                    // @poll
         st.shared.u32 [sh+4], %r;
         exit;",
    )
    .expect(&[("sync", "poll")], "load");
}

#[test]
fn a_barrier_with_a_thread_count_is_meant_for_part_of_the_block() {
    Parsed::new(
        "setp.ge.u32 %p, %tid.x, 64;
     @%p bra CONSUMER;
         bar.arrive 1, 128;
         bra END;
     CONSUMER:
         bar.sync 1, 128;
     END:
         st.shared.u32 [sh+4], %r;
         exit;",
    )
    .expect_none();
}

#[test]
fn a_barrier_guarded_by_a_divergent_predicate() {
    let kernel = Parsed::new(
        "and.b32 %r, %tid.x, 1;
         setp.eq.u32 %p, %r, 0;
     @%p bar.sync 0;                  // @sync
         st.shared.u32 [sh+4], %r;
         exit;",
    );
    kernel.expect(&[("sync", "sync")], "%tid.x");
    // A uniform guard is no finding.
    Parsed::new(
        "ld.param.u32 %n, [n];
         setp.eq.u32 %p, %n, 0;
     @%p bar.sync 0;
         st.shared.u32 [sh+4], %r;
         exit;",
    )
    .expect_none();
}

#[test]
fn warp_level_sources_are_divergent_across_the_block() {
    for source in [
        "activemask.b32 %r;",
        "vote.sync.ballot.b32 %r, %q, 0xffffffff;",
        "shfl.sync.idx.b32 %r, %n, 0, 31, 0xffffffff;",
        "atom.shared.add.u32 %r, [sh], 1;",
        "mov.u32 %r, %laneid;",
        "mov.u32 %r, %warpid;",
        "mov.u32 %r, %clock;",
        "mov.u32 %r, %lanemask_lt;",
    ] {
        let kernel = Parsed::new(&format!(
            "setp.eq.u32 %q, %n, 0;
             {source}
             setp.eq.u32 %p, %r, 0;
         @%p bra AFTER;                   // @branch
             bar.sync 0;                  // @sync
         AFTER:
             st.shared.u32 [sh+4], %r;
             exit;"
        ));
        assert_eq!(
            kernel.findings().len(),
            1,
            "{source} should make the branch divergent"
        );
    }
}

#[test]
fn local_memory_holds_per_thread_values() {
    // int a[1]; a[0] = tid; if (a[0] == 0) __syncthreads();
    let kernel_text = |value: &str| {
        format!(
            ".kernel k()\n{{\n.local .align 4 .u32 a[4];\n.reg .u32 %r;\n.reg .pred %p;\n\
             st.local.u32 [a], {value};\n\
             ld.local.u32 %r, [a];\n\
             setp.eq.u32 %p, %r, 0;\n\
             @%p bra AFTER;\n\
             bar.sync 0;\n\
             AFTER:\n\
             st.local.u32 [a+4], 0;\n\
             exit;\n}}\n"
        )
    };
    let divergent = parse_module("l.kir", &kernel_text("%tid.x")).unwrap();
    let findings = divergent_barriers(&divergent.kernels[0]);
    assert_eq!(
        findings
            .iter()
            .map(|finding| (finding.barrier.0, finding.branch.0, finding.reason.as_str()))
            .collect::<Vec<_>>(),
        [(
            4,
            3,
            "a load from per-thread local memory that holds divergent values"
        )],
        "{findings:#?}"
    );
    let uniform = parse_module("l.kir", &kernel_text("%ctaid.x")).unwrap();
    assert!(divergent_barriers(&uniform.kernels[0]).is_empty());
}

#[test]
fn odd_control_flow_does_not_panic() {
    // An empty kernel, an endless loop without an exit, unreachable code.
    let empty = parse_module("e.kir", ".kernel k()\n{\n}\n").unwrap();
    assert!(divergent_barriers(&empty.kernels[0]).is_empty());
    Parsed::new(
        "SPIN:
         bar.sync 0;
         bra SPIN;",
    )
    .expect_none();
    // An endless loop whose body holds a divergent if and then a barrier: the
    // barrier is reached by every thread in every round.
    Parsed::new(
        "SPIN:
         setp.lt.u32 %p, %tid.x, 5;
     @%p bra JOIN;
         add.u32 %r, %r, 1;
     JOIN:
         bar.sync 0;
         bra SPIN;",
    )
    .expect_none();
    // ... but a barrier inside the divergent if is a finding.
    let kernel = Parsed::new(
        "SPIN:
         setp.lt.u32 %p, %tid.x, 5;
     @%p bra JOIN;                    // @branch
         bar.sync 0;                  // @sync
     JOIN:
         bra SPIN;",
    );
    kernel.expect(&[("sync", "branch")], "%tid.x");
    Parsed::new(
        "exit;
         setp.lt.u32 %p, %tid.x, 5;
     @%p bra END;
         bar.sync 0;
     END:",
    )
    .expect_none();
}

#[test]
fn the_analysis_grows_about_linearly_with_the_kernel() {
    // Divergent ifs and uniform loops, one after another, `count`
    // instructions in all.
    let kernel_of = |count: usize| {
        let mut body = String::from("ld.param.u32 %n, [n];\n");
        let mut label = 0;
        while 1 + 8 * label < count {
            body.push_str(&format!(
                "setp.lt.u32 %p, %tid.x, {label};\n@%p bra S{label};\nadd.u32 %r, %r, %i;\nS{label}:\n\
                 mov.u32 %i, 0;\nL{label}:\nadd.u32 %i, %i, 1;\nbar.sync 0;\nsetp.lt.u32 %q, %i, %n;\n@%q bra L{label};\n"
            ));
            label += 1;
        }
        Parsed::new(&body)
    };
    // The fastest of three runs of each size, side by side: a loaded host
    // slows both alike, so their ratio says how the work grows, where a
    // limit on one run's time would say how busy the host was.
    let fastest = |kernel: &Parsed| {
        (0..3)
            .map(|_| {
                let started = Instant::now();
                let findings = kernel.findings();
                assert!(findings.is_empty(), "{findings:#?}");
                started.elapsed()
            })
            .min()
            .expect("three runs")
    };
    let (small, large) = (kernel_of(2_500), kernel_of(10_000));
    assert_eq!(large.kernel().instrs.len(), 10_001);
    let (small_time, large_time) = (fastest(&small), fastest(&large));
    // Four times the instructions: four times the time if linear, sixteen
    // if quadratic.
    let ratio = large_time.as_secs_f64() / small_time.as_secs_f64().max(1e-9);
    assert!(
        ratio < 9.0,
        "{} instructions took {large_time:?}, {} took {small_time:?}: {ratio:.1}x",
        large.kernel().instrs.len(),
        small.kernel().instrs.len(),
    );
}

fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../programs")
}

fn find_files(dir: &Path, extension: &str, found: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            find_files(&path, extension, found);
        } else if path.extension().is_some_and(|ext| ext == extension) {
            found.push(path);
        }
    }
}

/// The findings on programs of the repository that are genuine, as (file,
/// kernel, the barrier's source line): all in `programs/barriers`, the
/// barrier checker's suite, whose kernels break the rules on purpose (each
/// `.cu` and `.kir` file says what it expects). Every other program is
/// correct and has none.
const EXPLAINED: &[(&str, &str, u32)] = &[
    // if (tid % 32 < 16) c = __syncthreads_count(...): half of each warp.
    ("barriers/divergence.ptx", "syncthreadsCountDivergent", 29),
    // A uniform outer if around if (tid % 4 == 0) { __syncthreads(); }.
    ("barriers/divergence.ptx", "nestedDivergence", 46),
    // if (tid % 2) { ...; __syncthreads(); } else { ...; __syncthreads(); }.
    ("barriers/divergence.ptx", "ifElseSharedNeighbour", 93),
    ("barriers/divergence.ptx", "ifElseSharedNeighbour", 97),
    // if/else on the warp index, a barrier in each arm: uniform in a warp,
    // divergent in the block (this analysis is block-level).
    ("barriers/divergence.ptx", "warpUniformIfElse", 111),
    ("barriers/divergence.ptx", "warpUniformIfElse", 115),
    // Barriers in arms chosen by the thread index; it deadlocks with 256
    // threads (fine with 128 only by the launch's shape).
    ("barriers/divergence.ptx", "shapeDependentDeadlock", 133),
    ("barriers/divergence.ptx", "shapeDependentDeadlock", 136),
    // if (tid < 64) { __syncthreads(); ... } else { ... }: the others skip it.
    ("barriers/exits.ptx", "skipBarrierThenExit", 52),
    // if (idx % 2 == 0) __syncthreads(); as the last statement: the others
    // skip it on their way to the exit.
    ("barriers/skip-to-exit.ptx", "evenThenExit", 15),
    // if (t % 2) stage(s, t); where the inlined stage() holds the barrier
    // (line 7 of the function; the analysis reads the innermost lines).
    ("barriers/inlined.ptx", "inlineBarrierDivergent", 7),
    // A __noinline__ device function with a barrier, called under
    // if (tid % 2) (after inlining into the kernel by the parser), and called
    // in both arms of such an if.
    ("barriers/functions.ptx", "funcBarrierDivergent", 13),
    ("barriers/functions.ptx", "funcBarrierBothArms", 13),
    // for (i = 0; i < tid % 4; i++) __syncthreads();
    ("barriers/loops.ptx", "loopTripCountByThread", 14),
    // for (i = 0; i <= tid / 32; i++) __syncthreads();
    ("barriers/loops.ptx", "loopTripCountByWarp", 29),
    // The seed document's if/else with a barrier in each arm.
    ("barriers/public-cases.ptx", "ifElseSync", 15),
    ("barriers/public-cases.ptx", "ifElseSync", 18),
    // if (tid < 64) __syncthreads(); out[tid] = ...;
    ("barriers/public-cases.ptx", "condSync", 44),
    // if (tid < 32) { __syncthreads(); ... } else { while (*flag == 0); }
    ("barriers/public-cases.ptx", "spinDeadlock", 57),
    // bar.red on warps 0-1 and bar.sync on warps 2-3, chosen by tid / 32.
    ("barriers/red-mixed-with-sync.kir", "redMixedWithSync", 32),
    ("barriers/red-mixed-with-sync.kir", "redMixedWithSync", 35),
    // The seed document's if/else, each arm reading after its own barrier.
    (
        "barriers/if-else-neighbour.kir",
        "ifElseNeighbourInArms",
        43,
    ),
    (
        "barriers/if-else-neighbour.kir",
        "ifElseNeighbourInArms",
        50,
    ),
    // Two textually different bar.sync 0 chosen by tid / 32.
    ("barriers/unaligned-barriers.kir", "unalignedBarriers", 32),
    ("barriers/unaligned-barriers.kir", "unalignedBarriers", 35),
];

#[test]
fn the_programs_of_the_repository_have_no_divergent_barrier() {
    let dir = programs_dir();
    let mut files = Vec::new();
    find_files(&dir, "kir", &mut files);
    find_files(&dir, "ptx", &mut files);
    files.sort();
    assert!(files.len() >= 30, "found only {} programs", files.len());
    let mut unexplained = Vec::new();
    let mut missed: Vec<&(&str, &str, u32)> = Vec::new();
    let mut kernels = 0;
    for path in &files {
        let text = fs::read_to_string(path).unwrap();
        let name = path.strip_prefix(&dir).unwrap().to_string_lossy();
        let parse = if name.ends_with(".ptx") {
            parse_ptx
        } else {
            parse_module
        };
        // Whether every program parses is the business of other tests; a
        // program the parser does not accept yet is left out here.
        let module = match parse(&name, &text) {
            Ok(module) => module,
            Err(error) => {
                eprintln!("left out: {error}");
                continue;
            }
        };
        for kernel in &module.kernels {
            kernels += 1;
            let findings = divergent_barriers(kernel);
            let lines: Vec<u32> = findings
                .iter()
                .map(|finding| kernel.instrs[finding.barrier.index()].loc.line)
                .collect();
            // The genuine findings are checked too: each must be found.
            missed.extend(EXPLAINED.iter().filter(|(file, kernel_name, line)| {
                *file == name && *kernel_name == kernel.name && !lines.contains(line)
            }));
            for finding in findings {
                let line = kernel.instrs[finding.barrier.index()].loc.line;
                if !EXPLAINED.contains(&(&*name, kernel.name.as_str(), line)) {
                    unexplained.push(format!(
                        "{name}: kernel {}: barrier at line {line} (instruction {}), branch at line {} (instruction {}): {}",
                        kernel.name,
                        finding.barrier.0,
                        kernel.instrs[finding.branch.index()].loc.line,
                        finding.branch.0,
                        finding.reason
                    ));
                }
            }
        }
    }
    assert!(kernels >= 30, "found only {kernels} kernels");
    assert!(
        missed.is_empty(),
        "genuine divergent barriers not found: {missed:?}"
    );
    assert!(
        unexplained.is_empty(),
        "{} findings:\n{}",
        unexplained.len(),
        unexplained.join("\n")
    );
}

/// Packing, unpacking, funnel shifts, `lop3` and `set` are data flow like
/// any arithmetic: uniform sources give a uniform result, a thread index
/// among the sources a divergent one.
#[test]
fn packing_funnel_shifts_lop3_and_set_carry_divergence_from_their_sources() {
    let uniform = Parsed::new(
        "ld.param.u32 %n, [n];
         mov.b64 %g, {%n, %n};
         mov.b64 {%a, %x}, %g;
         shf.l.wrap.b32 %s, %a, %x, %n;
         lop3.b32 %c, %s, %a, %x, 0x96;
         set.lt.u32.u32 %i, %c, 7;
         setp.ne.u32 %p, %i, 0;
     @%p bra SKIP;                    // @branch
         bar.sync 0;                  // @sync
     SKIP:
         st.shared.u32 [sh], %i;
         exit;",
    );
    uniform.expect_none();
    let divergent = Parsed::new(
        "ld.param.u32 %n, [n];
         mov.u32 %t, %tid.x;
         mov.b64 %g, {%n, %t};
         mov.b64 {%a, %x}, %g;
         shf.l.wrap.b32 %s, %n, %x, %n;
         lop3.b32 %c, %s, %n, %n, 0x96;
         set.lt.u32.u32 %i, %c, 7;
         setp.ne.u32 %p, %i, 0;
     @%p bra SKIP;                    // @branch
         bar.sync 0;                  // @sync
     SKIP:
         st.shared.u32 [sh], %i;
         exit;",
    );
    divergent.expect(&[("sync", "branch")], "%tid.x");
}

/// The carry flag (CC.CF) is followed like a register: `add.cc` writes it and
/// `addc` reads it. A 64-bit addition done as a carry chain over a kernel
/// parameter is uniform; the same chain whose low words come from the thread
/// index carries the divergence into the high word through the flag alone
/// (the high words added are uniform), and so does a flag set under a
/// divergent branch and read after the join.
#[test]
fn a_carry_chain_is_as_uniform_as_what_sets_its_carry_flag() {
    let uniform = Parsed::new(
        "ld.param.u32 %n, [n];
         add.cc.u32 %a, %n, 0xffffffff;
         addc.cc.u32 %x, %n, 0;
         madc.lo.u32 %c, %n, %n, 0;
         setp.ne.u32 %p, %c, 0;
     @%p bra SKIP;                    // @branch
         bar.sync 0;                  // @sync
     SKIP:
         st.shared.u32 [sh], %a;
         exit;",
    );
    uniform.expect_none();
    let through_the_flag = Parsed::new(
        "ld.param.u32 %n, [n];
         mov.u32 %t, %tid.x;
         add.cc.u32 %a, %t, 0xffffffff;
         addc.u32 %x, %n, 0;
         setp.ne.u32 %p, %x, 0;
     @%p bra SKIP;                    // @branch
         bar.sync 0;                  // @sync
     SKIP:
         st.shared.u32 [sh], %a;
         exit;",
    );
    through_the_flag.expect(&[("sync", "branch")], "%tid.x");
    // `addc` adds only uniform registers: its result is divergent because
    // of the flag, and the explanation still names the root.
    let kernel = through_the_flag.kernel();
    let high_word = kernel
        .regs
        .iter()
        .position(|reg| reg.name == "%x")
        .map(|index| RegId(index as u32))
        .expect("%x is declared");
    let analysis = analyze(kernel);
    assert!(analysis.is_divergent_reg(high_word));
    assert_eq!(analysis.divergence_reason(high_word), Some("%tid.x"));
    let set_under_a_divergent_branch = Parsed::new(
        "ld.param.u32 %n, [n];
         add.cc.u32 %a, %n, 0;
         setp.lt.u32 %q, %tid.x, 5;
     @%q bra JOIN;
         add.cc.u32 %a, %n, 0xffffffff;
     JOIN:
         addc.u32 %x, %n, 0;
         setp.ne.u32 %p, %x, 0;
     @%p bra SKIP;                    // @branch
         bar.sync 0;                  // @sync
     SKIP:
         st.shared.u32 [sh], %x;
         exit;",
    );
    set_under_a_divergent_branch.expect(&[("sync", "branch")], "CC.CF");
}
