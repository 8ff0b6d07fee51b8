// Saturating arithmetic. CUDA has no intrinsic for the integer `.sat` forms
// or for `.sat` on an f32 add, sub, mul or fma (NVRTC compiles
// __saturatef(x + y) to an add and a cvt.sat), so the kernel spells them in
// inline PTX, as libraries that need them do.
extern "C" __global__ void saturating_arith(const int* a, const int* b, const float* u,
                                            int* iout, float* fout, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = a[i], y = b[i], z = a[(i + 1) % n];
    int sum, difference, high;
    asm("add.sat.s32 %0, %1, %2;" : "=r"(sum) : "r"(x), "r"(y));
    asm("sub.sat.s32 %0, %1, %2;" : "=r"(difference) : "r"(x), "r"(y));
    asm("mad.hi.sat.s32 %0, %1, %2, %3;" : "=r"(high) : "r"(x), "r"(y), "r"(z));
    iout[3 * i] = sum;
    iout[3 * i + 1] = difference;
    iout[3 * i + 2] = high;

    // p in [-1.5, 2.5), q in [-1, 2), w in [-1, 1); a NaN and infinities now and then.
    float p = __fmaf_rn(4.0f, u[i], -1.5f);
    float q = __fmaf_rn(3.0f, u[(i + 7) % n], -1.0f);
    float w = __fmaf_rn(2.0f, u[(i + 13) % n], -1.0f);
    if (i % 32 == 31) p = __int_as_float(0x7fffffff);
    if (i % 32 == 30) q = __int_as_float(0x7f800000);
    if (i % 32 == 29) w = __int_as_float(0xff800000);
    float fsum, fdifference, product, fused;
    asm("add.sat.f32 %0, %1, %2;" : "=f"(fsum) : "f"(p), "f"(q));
    asm("sub.sat.f32 %0, %1, %2;" : "=f"(fdifference) : "f"(p), "f"(q));
    asm("mul.sat.f32 %0, %1, %2;" : "=f"(product) : "f"(p), "f"(q));
    asm("fma.rn.sat.f32 %0, %1, %2, %3;" : "=f"(fused) : "f"(p), "f"(q), "f"(w));
    fout[5 * i] = fsum;
    fout[5 * i + 1] = fdifference;
    fout[5 * i + 2] = product;
    fout[5 * i + 3] = fused;
    fout[5 * i + 4] = __saturatef(p - w);
}
