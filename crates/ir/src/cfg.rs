//! Control-flow analyses on a kernel: basic blocks, immediate dominators
//! and immediate post-dominators. A divergent branch reconverges at the immediate
//! post-dominator of its block, which is what the convergence barriers that
//! the compiler inserts achieve on Volta and later GPUs (DESIGN.md,
//! "Execution semantics"). The algorithm is Cooper, Harvey and Kennedy,
//! "A Simple, Fast Dominance Algorithm" (2001), run on the reversed graph.

use crate::instr::Op;
use crate::kernel::{InstrId, Kernel};

/// A basic block: instructions `start..end`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub start: InstrId,
    pub end: InstrId,
    pub successors: Vec<Successor>,
}

/// Where control goes after a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Successor {
    Block(usize),
    /// The thread exits (an `exit`, or running past the last instruction).
    Exit,
}

/// The basic blocks of a kernel, in instruction order.
#[derive(Clone, Debug)]
pub struct Cfg {
    pub blocks: Vec<Block>,
    /// For each instruction, the block that holds it.
    pub block_of: Vec<usize>,
}

impl Cfg {
    pub fn build(kernel: &Kernel) -> Cfg {
        let count = kernel.instrs.len();
        let mut is_leader = vec![false; count + 1];
        is_leader[0] = true;
        for label in &kernel.labels {
            is_leader[label.target.index().min(count)] = true;
        }
        for (index, instr) in kernel.instrs.iter().enumerate() {
            if matches!(instr.op, Op::Branch { .. } | Op::Exit) {
                is_leader[index + 1] = true;
            }
        }
        let mut blocks = Vec::new();
        let mut block_of = vec![0; count];
        let mut start = 0;
        while start < count {
            let mut end = start + 1;
            while end < count && !is_leader[end] {
                end += 1;
            }
            for slot in &mut block_of[start..end] {
                *slot = blocks.len();
            }
            blocks.push(Block {
                start: InstrId(start as u32),
                end: InstrId(end as u32),
                successors: Vec::new(),
            });
            start = end;
        }
        let successor_at = |position: usize, block_of: &[usize]| {
            if position >= count {
                Successor::Exit
            } else {
                Successor::Block(block_of[position])
            }
        };
        for block in &mut blocks {
            let last = &kernel.instrs[block.end.index() - 1];
            let fallthrough = successor_at(block.end.index(), &block_of);
            let mut successors = Vec::new();
            match &last.op {
                Op::Branch { target } => {
                    let target = kernel.label(*target).target.index();
                    successors.push(successor_at(target, &block_of));
                    if last.guard.is_some() {
                        successors.push(fallthrough);
                    }
                }
                Op::Exit => {
                    successors.push(Successor::Exit);
                    if last.guard.is_some() {
                        successors.push(fallthrough);
                    }
                }
                _ => successors.push(fallthrough),
            }
            successors.dedup();
            block.successors = successors;
        }
        Cfg { blocks, block_of }
    }

    /// For each block, its immediate post-dominator: `Some(Successor::Block)`,
    /// `Some(Successor::Exit)` when only the exit post-dominates it, or `None`
    /// when the block cannot reach the exit at all (an endless loop).
    pub fn immediate_post_dominators(&self) -> Vec<Option<Successor>> {
        self.post_dominators_over(|block| self.blocks[block].successors.clone())
    }

    /// Where the paths of a divergent branch in each block reconverge: the
    /// immediate post-dominator, or, where that is only the exit, the
    /// immediate post-dominator in the graph without the edges that lead
    /// straight to an exit (a guarded `exit`, or a branch to a block that is
    /// only an `exit`) from blocks that have another way on. Lanes on such an
    /// edge leave the kernel at once, and a convergence barrier does not wait
    /// for exited threads (as the compiler's `BSSY`/`BSYNC` pairs behave on
    /// Volta and later), so the remaining lanes meet at the join after an
    /// early `return` instead of running the rest of the kernel apart.
    pub fn reconvergence_points(&self, kernel: &Kernel) -> Vec<Option<Successor>> {
        let textbook = self.immediate_post_dominators();
        let pruned_successors = self.pruned_successors(kernel);
        let pruned = self.post_dominators_over(|block| pruned_successors[block].clone());
        // Where the paths already meet before the exit, they meet there; the
        // pruned graph decides only for branches that would otherwise never
        // reconverge.
        textbook
            .into_iter()
            .zip(pruned)
            .map(|(textbook, pruned)| match textbook {
                Some(Successor::Exit) | None => pruned,
                meeting => meeting,
            })
            .collect()
    }

    /// Whether threads that go to `successor` leave the kernel at once: it is
    /// the exit, or a block whose first instruction is an unguarded `exit`.
    pub(crate) fn exits_at_once(&self, kernel: &Kernel, successor: Successor) -> bool {
        match successor {
            Successor::Exit => true,
            Successor::Block(block) => {
                let first = &kernel.instrs[self.blocks[block].start.index()];
                first.guard.is_none() && matches!(first.op, Op::Exit)
            }
        }
    }

    /// The successors of each block in the pruned graph: without the edges
    /// that lead straight to an exit (a guarded `exit`, or a branch to a block
    /// whose first instruction is an unguarded `exit`) from blocks that have
    /// another way on. Threads on such an edge leave the kernel at once, so
    /// neither a convergence barrier nor a block barrier waits for them.
    pub fn pruned_successors(&self, kernel: &Kernel) -> Vec<Vec<Successor>> {
        let exits_at_once = |successor: &Successor| self.exits_at_once(kernel, *successor);
        self.blocks
            .iter()
            .map(|block| {
                let staying: Vec<Successor> = block
                    .successors
                    .iter()
                    .filter(|successor| !exits_at_once(successor))
                    .copied()
                    .collect();
                if staying.is_empty() {
                    block.successors.clone()
                } else {
                    staying
                }
            })
            .collect()
    }

    /// For each block, its immediate dominator: `Some(block)`, or `None`
    /// for the entry block and for blocks the entry cannot reach. The same
    /// algorithm as the post-dominators, on the graph with its edges turned
    /// round and the entry standing in for the exit.
    pub fn immediate_dominators(&self) -> Vec<Option<usize>> {
        let mut predecessors: Vec<Vec<Successor>> = vec![Vec::new(); self.blocks.len()];
        for (index, block) in self.blocks.iter().enumerate() {
            for successor in &block.successors {
                if let Successor::Block(next) = *successor {
                    predecessors[next].push(Successor::Block(index));
                }
            }
        }
        if let Some(entry) = predecessors.first_mut() {
            entry.push(Successor::Exit);
        }
        self.post_dominators_over(|block| predecessors[block].clone())
            .into_iter()
            .map(|dominator| match dominator {
                Some(Successor::Block(block)) => Some(block),
                Some(Successor::Exit) | None => None,
            })
            .collect()
    }

    /// Immediate post-dominators over the edges `successors_of` gives, for
    /// each block: `None` when the block cannot reach the exit over them.
    pub fn post_dominators_over(
        &self,
        successors_of: impl Fn(usize) -> Vec<Successor>,
    ) -> Vec<Option<Successor>> {
        let count = self.blocks.len();
        let successors: Vec<Vec<Successor>> = (0..count).map(&successors_of).collect();
        // Node `count` is the virtual exit; edges are reversed, so a node's
        // "predecessors" in the algorithm are its successors in the CFG.
        let exit = count;
        let node = |successor: Successor| match successor {
            Successor::Block(index) => index,
            Successor::Exit => exit,
        };
        let mut reverse_predecessors: Vec<Vec<usize>> = vec![Vec::new(); count + 1];
        for (index, block_successors) in successors.iter().enumerate() {
            for &successor in block_successors {
                reverse_predecessors[node(successor)].push(index);
            }
        }
        // Post-order of the reversed graph from the exit, by an explicit stack.
        let mut order = Vec::with_capacity(count + 1);
        let mut visited = vec![false; count + 1];
        let mut stack = vec![(exit, 0usize)];
        visited[exit] = true;
        while let Some((current, child)) = stack.pop() {
            if let Some(&next) = reverse_predecessors[current].get(child) {
                stack.push((current, child + 1));
                if !visited[next] {
                    visited[next] = true;
                    stack.push((next, 0));
                }
            } else {
                order.push(current);
            }
        }
        let mut rank = vec![usize::MAX; count + 1];
        for (position, &n) in order.iter().enumerate() {
            rank[n] = position;
        }
        let mut ipdom: Vec<Option<usize>> = vec![None; count + 1];
        ipdom[exit] = Some(exit);
        let mut changed = true;
        while changed {
            changed = false;
            for &n in order.iter().rev() {
                if n == exit {
                    continue;
                }
                let mut new_ipdom: Option<usize> = None;
                for successor in &successors[n] {
                    let s = node(*successor);
                    if ipdom[s].is_none() {
                        continue;
                    }
                    new_ipdom = Some(match new_ipdom {
                        None => s,
                        Some(current) => intersect(&ipdom, &rank, current, s),
                    });
                }
                if new_ipdom.is_some() && ipdom[n] != new_ipdom {
                    ipdom[n] = new_ipdom;
                    changed = true;
                }
            }
        }
        (0..count)
            .map(|index| {
                ipdom[index].map(|p| {
                    if p == exit {
                        Successor::Exit
                    } else {
                        Successor::Block(p)
                    }
                })
            })
            .collect()
    }
}

fn intersect(ipdom: &[Option<usize>], rank: &[usize], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while rank[a] < rank[b] {
            match ipdom[a] {
                Some(next) => a = next,
                None => return b,
            }
        }
        while rank[b] < rank[a] {
            match ipdom[b] {
                Some(next) => b = next,
                None => return a,
            }
        }
    }
    a
}
