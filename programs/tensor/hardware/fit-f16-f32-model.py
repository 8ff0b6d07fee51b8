"""Checks a model of the H100's m16n8k16 f16 x f16 + f32 mma against probe/f16_f32_m16n8k16.random.bin:
products exact; the 16 products and c aligned to the largest exponent (a product's exponent is
exp(a) + exp(b), its significand in [1, 4)); each term truncated toward zero to 2^(emax - 25);
summed exactly; the sum truncated toward zero to f32. Run from this directory:
    python3 fit-f16-f32-model.py 48   (fragments to check; prints p, group, modes, matches, cases)
"""
import sys; sys.path.insert(0,'.')
from fit_model_common import *
import math, itertools
frags=gen(0,4,2,4,'f16','f32',int(sys.argv[1]) if len(sys.argv)>1 else 16)
d=np.fromfile('probe/f16_f32_m16n8k16.random.bin',dtype=np.uint32).reshape(-1,32,4)
def exp2(x): # exponent e such that 2^e <= |x| < 2^(e+1)
    n,dn=abs(x.numerator),x.denominator
    e=n.bit_length()-dn.bit_length()
    if Fraction(n,dn) < Fraction(2)**e: e-=1
    return e
def trunc_to(x, ulp, mode):  # truncate x to multiple of ulp
    q=x/ulp
    if mode=='rz': t=math.trunc(q)
    else: t=math.floor(q)
    return t*ulp
def to_f32_bits(x, mode):
    if x==0: return 0
    e=exp2(x); ulp=Fraction(2)**(e-23)
    if mode=='rz': y=trunc_to(x,ulp,'rz')
    elif mode=='rn': y=Fraction(float(np.float32(float(x))))
    elif mode=='rd': y=trunc_to(x,ulp,'rd')
    return int(np.array(np.float32(float(y))).view(np.uint32))
def model(prods, c, p, group, cmode, talign, final):
    # fused: all terms in a group aligned to the largest exponent in the group; keep 24+p bits below? 
    terms=[x*y for x,y in prods]
    pe=[(exp2(x)+exp2(y)) if x!=0 and y!=0 else None for x,y in prods]
    def block(ts, es):
        nz=[e for t,e in zip(ts,es) if t!=0]
        if not nz: return Fraction(0)
        emax=max(nz)
        ulp=Fraction(2)**(emax-p)
        return sum(trunc_to(t,ulp,talign) for t in ts)
    if cmode=='with_all':
        acc=block(terms+[c], pe+[exp2(c) if c!=0 else None]) if group==16 else None
        if group!=16:
            acc=c
            for i in range(0,16,group):
                acc=block(terms[i:i+group]+[acc], pe[i:i+group]+[exp2(acc) if acc!=0 else None])
    return to_f32_bits(acc, final)
cases=[]
for fi,(A,B,C) in enumerate(frags):
    a,b,cpos=matrices(A,B,C)
    for row in range(16):
        for col in range(8):
            lane,e=cpos[row][col]
            cases.append(([(h2f(a[row][k]),h2f(b[k][col])) for k in range(16)], f2f(C[lane][e]), int(d[fi,lane,e])))
for p in (25,):
  for group in (16,):
    for talign in ("rz",):
      for final in ('rz',):
        ok=sum(model(pr,c,p,group,'with_all',talign,final)==hw for pr,c,hw in cases)
        print(p,group,talign,final,ok,len(cases))
