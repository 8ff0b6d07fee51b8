"""Shared helpers of the fit scripts: the splitmix64 operands of mma-probe.cu and the m16n8k16
fragment layout of the PTX ISA (9.7.14.5.8)."""
import numpy as np, struct, sys
from fractions import Fraction
M64=(1<<64)-1
def splitmix(state):
    state=(state+0x9E3779B97F4A7C15)&M64
    z=state
    z=((z^(z>>30))*0xBF58476D1CE4E5B9)&M64
    z=((z^(z>>27))*0x94D049BB133111EB)&M64
    return state, z^(z>>31)
def f16(u,wide):
    e=((u>>10)%31) if wide else 12+((u>>10)%7)
    return ((u>>31)<<15)|(e<<10)|(u&0x3ff)
def f32r(u,m,wide):
    e=87+u%81 if wide else 124+u%7
    return ((m>>31)<<31)|(e<<23)|(m&0x7fffff)
def gen(index, ar, br, cr, kind_a, kind_c, fragments):
    state=1000+index
    out=[]
    for f in range(fragments):
        wide=f%2==1
        A=[];B=[];C=[]
        for lane in range(32):
            for lst,kind,n in ((A,kind_a,ar),(B,kind_a,br),(C,kind_c,cr)):
                regs=[]
                for i in range(n):
                    state,r=splitmix(state)
                    lo=r&0xffffffff; hi=r>>32
                    if kind=='f16': v=f16(lo,wide)|(f16(hi,wide)<<16)
                    elif kind=='f32': v=f32r(lo,hi,wide)
                    regs.append(v)
                lst.append(regs)
        out.append((A,B,C))
    return out
def h2f(b): return Fraction(float(np.array(b,dtype=np.uint16).view(np.float16)))
def f2f(b): return Fraction(struct.unpack('<f',struct.pack('<I',b))[0])
def matrices(A,B,C):
    a=[[None]*16 for _ in range(16)]; b=[[None]*8 for _ in range(16)]; c=[[None]*8 for _ in range(16)]
    for lane in range(32):
        g=lane>>2; t=lane&3
        for e in range(8):
            reg=A[lane][e//2]; bits=(reg>>(16*(e&1)))&0xffff
            row=g+(8 if e in (2,3,6,7) else 0); col=t*2+(e&1)+(8 if e>=4 else 0)
            a[row][col]=bits
        for e in range(4):
            reg=B[lane][e//2]; bits=(reg>>(16*(e&1)))&0xffff
            k=t*2+(e&1)+(8 if e>=2 else 0); b[k][g]=bits
        for e in range(4):
            row=g+(8 if e>=2 else 0); col=t*2+(e&1); c[row][col]=(lane,e)
    return a,b,c
