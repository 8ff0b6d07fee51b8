// Funnel shifts and three-input logic: __funnelshift_l/_r (wrapping the
// shift amount) and __funnelshift_lc/_rc (clamping it at 32) compile to
// shf.l/.r.wrap/.clamp.b32; a 64-bit rotate by a variable amount; lop3.b32
// with a few truth tables (majority, a ^ b ^ c, a ? b : c) through inline PTX.
extern "C" __global__ void funnel_lop3(const unsigned* lo, const unsigned* hi, const unsigned* c,
                                       unsigned* out, unsigned long long* rotated, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned a = lo[i], b = hi[i], s = c[i] & 63;
    out[8 * i] = __funnelshift_l(a, b, s);
    out[8 * i + 1] = __funnelshift_r(a, b, s);
    out[8 * i + 2] = __funnelshift_lc(a, b, s);
    out[8 * i + 3] = __funnelshift_rc(a, b, s);
    unsigned majority, parity, select;
    asm("lop3.b32 %0, %1, %2, %3, 0xe8;" : "=r"(majority) : "r"(a), "r"(b), "r"(c[i]));
    asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(parity) : "r"(a), "r"(b), "r"(c[i]));
    asm("lop3.b32 %0, %1, %2, %3, 0xca;" : "=r"(select) : "r"(a), "r"(b), "r"(c[i]));
    out[8 * i + 4] = majority;
    out[8 * i + 5] = parity;
    out[8 * i + 6] = select;
    out[8 * i + 7] = (a & ~b) | (b ^ c[i]);
    unsigned long long v = ((unsigned long long)b << 32) | a;
    rotated[i] = (v << s) | (v >> ((64 - s) & 63));
}
