// Barrier checker suite (issue 4): warp-synchronous code: __syncwarp,
// shuffles and votes with masks, correct and incorrect.
// Every kernel takes one buffer `out` (1024 ints, zeroed) and runs with 64
// threads (two warps). Line numbers are lines of this file.

// syncwarpCorrect (64 threads): a shared-memory warp sum, __syncwarp() between
// every read and write (lines 13-18). out[tid] = sum of its warp's tids.
// Expect: none.
extern "C" __global__ void syncwarpCorrect(int* out) {
  __shared__ int s[64];
  unsigned tid = threadIdx.x, lane = tid % 32;
  s[tid] = tid;
  __syncwarp();  // <- sc1
  for (unsigned off = 16; off > 0; off /= 2) {
    int v = lane < off ? s[tid + off] : 0;
    __syncwarp();  // <- sc2
    if (lane < off) s[tid] += v;
    __syncwarp();  // <- sc3
  }
  out[tid] = s[tid - lane];
}

// syncwarpMaskMissesCaller (64 threads): every lane executes
// __syncwarp(0xfffffffe) (line 30); lane 0 is not in the mask.
// Expect: warp-sync, error, line 30 (lane 0 of each warp).
extern "C" __global__ void syncwarpMaskMissesCaller(int* out) {
  __shared__ int s[64];
  unsigned tid = threadIdx.x;
  s[tid] = tid;
  __syncwarp(0xfffffffe);  // <- sm
  out[tid] = s[tid ^ 1];
}

// syncwarpMaskExitedLanes (64 threads): lanes 16-31 store -1 and exit (line
// 43); lanes 0-15 then execute __syncwarp(0xffffffff) (line 46), whose
// mask names the exited lanes.
// Expect: warp-sync, warning, line 46.
extern "C" __global__ void syncwarpMaskExitedLanes(int* out) {
  __shared__ int s[64];
  unsigned tid = threadIdx.x, lane = tid % 32;
  if (lane >= 16) {
    out[tid] = -1;
    return;  // <- se0
  }
  s[tid] = tid;
  __syncwarp(0xffffffff);  // <- se
  out[tid] = s[tid ^ 1];
}

// syncwarpNeverArrive (64 threads): lanes 0-15 execute __syncwarp(0xffffffff)
// (line 60) and only after it set a flag (line 61); lanes 16-31 spin
// on that flag (line 63) and never reach a __syncwarp.
// Expect: warp-sync, error, line 60 (named lanes 16-31 never arrive: it
// hangs); livelock, error, line 63 is acceptable in addition.
extern "C" __global__ void syncwarpNeverArrive(int* out) {
  unsigned tid = threadIdx.x, lane = tid % 32;
  volatile int* flag = out + 1000 + tid / 32;
  if (lane < 16) {
    out[tid] = 1;
    __syncwarp(0xffffffff);  // <- sn1
    if (lane == 0) *flag = 1;  // <- sn2
  } else {
    while (*flag == 0) {  // <- sn3
    }
  }
  out[64 + tid] = tid;
}

// shflPartialCorrect (64 threads): only lanes 0-15 execute
// __shfl_down_sync(0x0000ffff, v, 1, 16) (line 78): the mask is exactly the
// lanes that execute it and width 16 keeps every source inside them (lane 15
// gets its own value). out[tid] = 3 tid + 3 (tid + 1) for lanes 0-14,
// 6 tid for lane 15, 3 tid for lanes 16-31.
// Expect: none.
extern "C" __global__ void shflPartialCorrect(int* out) {
  unsigned tid = threadIdx.x, lane = tid % 32;
  int v = tid * 3;
  if (lane < 16) v += __shfl_down_sync(0x0000ffff, v, 1, 16);  // <- sp
  out[tid] = v;
}

// shflReadsInactiveLane (64 threads): lanes 0-15 execute
// __shfl_down_sync(0x0000ffff, v, 1) (line 90) with width 32: lane 15 reads
// lane 16, which is neither in the mask nor executing the shuffle.
// Expect: warp-sync, warning, line 90 (lane 15 reads an inactive lane; its
// value is undefined).
extern "C" __global__ void shflReadsInactiveLane(int* out) {
  unsigned tid = threadIdx.x, lane = tid % 32;
  int v = tid * 3;
  if (lane < 16) v += __shfl_down_sync(0x0000ffff, v, 1);  // <- sr
  out[tid] = v;
}

// shflMaskAbsentLanes (64 threads): lanes 0-15 execute
// __shfl_xor_sync(0xffffffff, v, 1) (line 103); lanes 16-31, named in the
// mask, skip it and wait at the __syncthreads of line 104 (gunrock #324).
// Expect: warp-sync, error, line 103 (named lanes never arrive); deadlock,
// error, lines 103 and 104 (the shuffle waits for lanes that wait at the
// barrier for it).
extern "C" __global__ void shflMaskAbsentLanes(int* out) {
  unsigned tid = threadIdx.x, lane = tid % 32;
  int v = tid;
  if (lane < 16) v += __shfl_xor_sync(0xffffffff, v, 1);  // <- sa
  __syncthreads();  // <- sa2
  out[tid] = v;
}

// ballotMaskExcludesCaller (64 threads): every lane executes
// __ballot_sync(0x0000ffff, ...) (line 113); lanes 16-31 are not in the mask.
// Expect: warp-sync, error, line 113 (lanes 16-31 of each warp).
extern "C" __global__ void ballotMaskExcludesCaller(int* out) {
  unsigned tid = threadIdx.x;
  unsigned b = __ballot_sync(0x0000ffff, tid % 3 == 0);  // <- bm
  out[tid] = (int)b;
}
