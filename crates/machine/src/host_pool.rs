//! The pools of host threads that launches run on: one per thread count,
//! made the first time a launch asks for it and kept for the life of the
//! process.
//!
//! A launch used to build a pool of its own (and the driver another, to
//! fill the launch's buffers), so each launch on 16 threads started and
//! stopped 32 threads, and each new thread's first allocations faulted in
//! fresh pages. A program that runs many launches (the tests, the
//! benchmarks, a validation sweep) now pays for that once.

use std::sync::{Arc, Mutex, OnceLock};

use rayon::{ThreadPool, ThreadPoolBuildError, ThreadPoolBuilder};

/// The pools made so far, with their thread counts.
type Pools = Mutex<Vec<(usize, Arc<ThreadPool>)>>;

/// The pool of `threads` host threads (0: rayon's default, every core),
/// shared by every launch that asks for that many.
pub fn host_pool(threads: usize) -> Result<Arc<ThreadPool>, ThreadPoolBuildError> {
    static POOLS: OnceLock<Pools> = OnceLock::new();
    let mut pools = POOLS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, pool)) = pools.iter().find(|(size, _)| *size == threads) {
        return Ok(Arc::clone(pool));
    }
    let pool = Arc::new(ThreadPoolBuilder::new().num_threads(threads).build()?);
    pools.push((threads, Arc::clone(&pool)));
    Ok(pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_count_gets_the_same_pool_every_time() {
        let first = host_pool(3).unwrap();
        let again = host_pool(3).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(first.current_num_threads(), 3);
        let other = host_pool(2).unwrap();
        assert!(!Arc::ptr_eq(&first, &other));
        assert_eq!(other.current_num_threads(), 2);
    }
}
