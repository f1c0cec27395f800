//! The allocation-counting global allocator of the benches that report heap allocations per
//! publish (`decode`, `publish`). Including it installs it for that bench binary:
//! `#[path = "support/counting_alloc.rs"] mod counting_alloc;` (not in support/mod.rs, which the
//! latency benches include and which must keep the plain system allocator).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

/// The system allocator, counting allocations (and reallocations) made through it.
struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to `System`; the counter has no effect on memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations and reallocations made by the process so far (frees are not counted).
pub fn allocations() -> u64 {
    ALLOCS.load(Ordering::Relaxed)
}
