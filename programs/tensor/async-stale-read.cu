// Reads shared memory before waiting for the cp.async that fills it: racy
// on purpose, for `warpsim check`. Each thread copies 4 bytes of `in` into
// shared memory, reads its own word back before `cp.async.wait_all` (the
// old contents: the fill pattern or whatever the copy has managed by then
// on a GPU) and after it (the copied value).

extern "C" __global__ void async_stale_read(const int *in, int *before, int *after)
{
    __shared__ int staged[64];
    int thread = threadIdx.x;
    staged[thread] = -1;
    __syncwarp();
    unsigned destination = (unsigned)__cvta_generic_to_shared(&staged[thread]);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(destination), "l"(&in[thread]) : "memory");
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    before[thread] = staged[thread];
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    after[thread] = staged[thread];
}
