// redux_arms<<<1, 64>>>(out): __reduce_add_sync, __reduce_max_sync and
// __match_any_sync with the full mask, called in both arms of a branch that
// splits every warp (even lanes / odd lanes). On sm_70 and later the
// warp-synchronous instructions of the two arms may meet; this kernel
// records what an H100 gives, to compare with warpsim.
extern "C" __global__ void redux_arms(unsigned* out)
{
    unsigned t = threadIdx.x, lane = t % 32;
    unsigned sum, mx, any;
    if (lane % 2 == 0) {
        sum = __reduce_add_sync(0xffffffff, t + 1);
        mx = __reduce_max_sync(0xffffffff, t * 3);
        any = __match_any_sync(0xffffffff, t % 4);
    } else {
        sum = __reduce_add_sync(0xffffffff, 1000 + t);
        mx = __reduce_max_sync(0xffffffff, t);
        any = __match_any_sync(0xffffffff, t % 3);
    }
    out[3 * t] = sum;
    out[3 * t + 1] = mx;
    out[3 * t + 2] = any;
}
