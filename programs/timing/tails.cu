//! Microbenchmarks of what a block costs around its work: an empty kernel, stores a block exits right after, and a barrier right after a store, with and without time between them.
//
// Each kernel is launched as one block, and Nsight Compute's
// sm__cycles_active.max says how long the SM was busy with it, launch and
// exit included. The timed kernels also write clock64() cycles to
// `cycles`: [0] from the instruction after the store's wait to the barrier's
// end, [1] from before the store to the barrier's end. Hardware figures:
// programs/timing/hardware/h200-tails.txt.

extern "C" __global__ void emptyKernel() {}

// One coalesced 4-byte store a thread, and exit: the tail of
// seed-kernels.cu's setRowReadRow.
extern "C" __global__ void storeOnce(unsigned* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x;
}

// `stores` coalesced 4-byte stores a thread, each a line further on for a
// warp, and exit.
extern "C" __global__ void storeMany(unsigned* out, int stores) {
  unsigned* base = out + blockIdx.x * blockDim.x + threadIdx.x;
  unsigned step = gridDim.x * blockDim.x;
#pragma unroll 4
  for (int k = 0; k < stores; k++) base[k * step] = threadIdx.x + k;
}

// A load whose value decides a store that never happens (`in` holds
// zeros): a block that exits once a load has come back, with nothing
// stored.
extern "C" __global__ void loadOnce(const unsigned* in, unsigned* out) {
  unsigned index = blockIdx.x * blockDim.x + threadIdx.x;
  if (in[index] == 0xdeadbeefu) out[index] = 1;
}

// Spins until `cycles` have passed since `start` on the SM's clock.
__device__ void spinUntil(long long start, int cycles) {
  while (clock64() - start < cycles) {
  }
}

// A store, `spin` cycles of nothing, and exit: whether the SM stays busy
// until the store is acknowledged shows as a floor under the active cycles.
extern "C" __global__ void storeSpinExit(unsigned* out, int spin) {
  long long start = clock64();
  out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x;
  spinUntil(start, spin);
}

// A store, `spin` cycles of nothing, then a barrier: the barrier's cost
// after the wait ([0]) against the whole ([1]) says when the store stops
// holding the barrier.
extern "C" __global__ void storeSpinBarrier(unsigned long long* cycles, unsigned* out, int spin) {
  __syncthreads();
  long long start = clock64();
  out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x;
  spinUntil(start, spin);
  long long waited = clock64();
  __syncthreads();
  long long end = clock64();
  if (threadIdx.x == 0) {
    cycles[0] = end - waited;
    cycles[1] = end - start;
  }
}

// The same with a shared-memory store before the barrier: the barrier's
// cost with no global store outstanding.
extern "C" __global__ void sharedStoreBarrier(unsigned long long* cycles, unsigned* out) {
  __shared__ unsigned tile[1024];
  __syncthreads();
  long long start = clock64();
  tile[threadIdx.x] = threadIdx.x;
  long long waited = clock64();
  __syncthreads();
  long long end = clock64();
  if (threadIdx.x == 0) {
    cycles[0] = end - waited;
    cycles[1] = end - start;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}

// A store, then __threadfence_block() (membar.cta) in place of the
// barrier.
extern "C" __global__ void storeBlockFence(unsigned long long* cycles, unsigned* out) {
  __syncthreads();
  long long start = clock64();
  out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x;
  long long waited = clock64();
  __threadfence_block();
  long long end = clock64();
  if (threadIdx.x == 0) {
    cycles[0] = end - waited;
    cycles[1] = end - start;
  }
}

// What a kernel's first barrier and its clock reads cost: a barrier and a
// store; a store and a barrier; two clock reads whose difference lane 0
// stores.
extern "C" __global__ void barrierThenStore(unsigned* out) {
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x;
}

extern "C" __global__ void storeThenBarrier(unsigned* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x;
  __syncthreads();
}

extern "C" __global__ void clockPair(unsigned long long* cycles) {
  long long start = clock64();
  long long end = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = end - start;
}

// Two stores in a row: lane 0's two 8-byte words in one sector, or in two
// sectors; every lane's word and then lane 0's word in another buffer;
// every lane's word twice; and a copy, each lane's loaded word stored.
extern "C" __global__ void laneStoresSameSector(unsigned long long* out) {
  if (threadIdx.x == 0) {
    out[0] = 1;
    out[1] = 2;
  }
}

extern "C" __global__ void laneStoresTwoSectors(unsigned long long* out) {
  if (threadIdx.x == 0) {
    out[0] = 1;
    out[4] = 2;
  }
}

extern "C" __global__ void storeThenLaneStore(unsigned* out, unsigned long long* flag) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x;
  if (threadIdx.x == 0) flag[blockIdx.x] = 1;
}

extern "C" __global__ void storeTwice(unsigned* out) {
  unsigned index = blockIdx.x * blockDim.x + threadIdx.x;
  out[index] = threadIdx.x;
  out[index + gridDim.x * blockDim.x] = threadIdx.x + 1;
}

extern "C" __global__ void copyOnce(const unsigned* in, unsigned* out) {
  unsigned index = blockIdx.x * blockDim.x + threadIdx.x;
  out[index] = in[index];
}

// Copies that differ in what lies between the load and the store: a
// shared-memory round trip, a barrier, both, or a barrier after the store
// (seed-kernels.cu's seed1_noconflict is the third).
extern "C" __global__ void copyThroughShared(const unsigned* in, unsigned* out) {
  __shared__ unsigned tile[1024];
  unsigned index = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = in[index];
  out[index] = tile[threadIdx.x];
}

extern "C" __global__ void copyAcrossBarrier(const unsigned* in, unsigned* out) {
  unsigned index = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned value = in[index];
  __syncthreads();
  out[index] = value;
}

extern "C" __global__ void copyThroughSharedAcrossBarrier(const unsigned* in, unsigned* out) {
  __shared__ unsigned tile[1024];
  unsigned index = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = in[index];
  __syncthreads();
  out[index] = tile[threadIdx.x];
}

extern "C" __global__ void copyThenBarrier(const unsigned* in, unsigned* out) {
  unsigned index = blockIdx.x * blockDim.x + threadIdx.x;
  out[index] = in[index];
  __syncthreads();
}

// One lane stores a word (or 8 bytes), and the block exits: a partial
// sector's store at the end of a kernel, as a kernel's thread 0 writes its
// result.
extern "C" __global__ void laneStore(unsigned* out) {
  if (threadIdx.x == 0) out[blockIdx.x] = 1;
}

extern "C" __global__ void laneStoreWide(unsigned long long* out) {
  if (threadIdx.x == 0) out[blockIdx.x] = 1;
}

// One lane stores a word, and every lane spins `spin` cycles before exit.
extern "C" __global__ void laneStoreSpinExit(unsigned* out, int spin) {
  long long start = clock64();
  if (threadIdx.x == 0) out[blockIdx.x] = 1;
  spinUntil(start, spin);
}

// Constant-memory chases: each load's index is the value the one before
// loaded, `chase_steps` loads 4, 64 or 256 bytes apart, first from a cold
// constant cache ([0]) and then again over the same entries ([1]).

__constant__ unsigned chainStride4[1024] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240, 241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255, 256, 257, 258, 259, 260, 261, 262, 263, 264, 265, 266, 267, 268, 269, 270, 271, 272, 273, 274, 275, 276, 277, 278, 279, 280, 281, 282, 283, 284, 285, 286, 287, 288, 289, 290, 291, 292, 293, 294, 295, 296, 297, 298, 299, 300, 301, 302, 303, 304, 305, 306, 307, 308, 309, 310, 311, 312, 313, 314, 315, 316, 317, 318, 319, 320, 321, 322, 323, 324, 325, 326, 327, 328, 329, 330, 331, 332, 333, 334, 335, 336, 337, 338, 339, 340, 341, 342, 343, 344, 345, 346, 347, 348, 349, 350, 351, 352, 353, 354, 355, 356, 357, 358, 359, 360, 361, 362, 363, 364, 365, 366, 367, 368, 369, 370, 371, 372, 373, 374, 375, 376, 377, 378, 379, 380, 381, 382, 383, 384, 385, 386, 387, 388, 389, 390, 391, 392, 393, 394, 395, 396, 397, 398, 399, 400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 418, 419, 420, 421, 422, 423, 424, 425, 426, 427, 428, 429, 430, 431, 432, 433, 434, 435, 436, 437, 438, 439, 440, 441, 442, 443, 444, 445, 446, 447, 448, 449, 450, 451, 452, 453, 454, 455, 456, 457, 458, 459, 460, 461, 462, 463, 464, 465, 466, 467, 468, 469, 470, 471, 472, 473, 474, 475, 476, 477, 478, 479, 480, 481, 482, 483, 484, 485, 486, 487, 488, 489, 490, 491, 492, 493, 494, 495, 496, 497, 498, 499, 500, 501, 502, 503, 504, 505, 506, 507, 508, 509, 510, 511, 512, 513, 514, 515, 516, 517, 518, 519, 520, 521, 522, 523, 524, 525, 526, 527, 528, 529, 530, 531, 532, 533, 534, 535, 536, 537, 538, 539, 540, 541, 542, 543, 544, 545, 546, 547, 548, 549, 550, 551, 552, 553, 554, 555, 556, 557, 558, 559, 560, 561, 562, 563, 564, 565, 566, 567, 568, 569, 570, 571, 572, 573, 574, 575, 576, 577, 578, 579, 580, 581, 582, 583, 584, 585, 586, 587, 588, 589, 590, 591, 592, 593, 594, 595, 596, 597, 598, 599, 600, 601, 602, 603, 604, 605, 606, 607, 608, 609, 610, 611, 612, 613, 614, 615, 616, 617, 618, 619, 620, 621, 622, 623, 624, 625, 626, 627, 628, 629, 630, 631, 632, 633, 634, 635, 636, 637, 638, 639, 640, 641, 642, 643, 644, 645, 646, 647, 648, 649, 650, 651, 652, 653, 654, 655, 656, 657, 658, 659, 660, 661, 662, 663, 664, 665, 666, 667, 668, 669, 670, 671, 672, 673, 674, 675, 676, 677, 678, 679, 680, 681, 682, 683, 684, 685, 686, 687, 688, 689, 690, 691, 692, 693, 694, 695, 696, 697, 698, 699, 700, 701, 702, 703, 704, 705, 706, 707, 708, 709, 710, 711, 712, 713, 714, 715, 716, 717, 718, 719, 720, 721, 722, 723, 724, 725, 726, 727, 728, 729, 730, 731, 732, 733, 734, 735, 736, 737, 738, 739, 740, 741, 742, 743, 744, 745, 746, 747, 748, 749, 750, 751, 752, 753, 754, 755, 756, 757, 758, 759, 760, 761, 762, 763, 764, 765, 766, 767, 768, 769, 770, 771, 772, 773, 774, 775, 776, 777, 778, 779, 780, 781, 782, 783, 784, 785, 786, 787, 788, 789, 790, 791, 792, 793, 794, 795, 796, 797, 798, 799, 800, 801, 802, 803, 804, 805, 806, 807, 808, 809, 810, 811, 812, 813, 814, 815, 816, 817, 818, 819, 820, 821, 822, 823, 824, 825, 826, 827, 828, 829, 830, 831, 832, 833, 834, 835, 836, 837, 838, 839, 840, 841, 842, 843, 844, 845, 846, 847, 848, 849, 850, 851, 852, 853, 854, 855, 856, 857, 858, 859, 860, 861, 862, 863, 864, 865, 866, 867, 868, 869, 870, 871, 872, 873, 874, 875, 876, 877, 878, 879, 880, 881, 882, 883, 884, 885, 886, 887, 888, 889, 890, 891, 892, 893, 894, 895, 896, 897, 898, 899, 900, 901, 902, 903, 904, 905, 906, 907, 908, 909, 910, 911, 912, 913, 914, 915, 916, 917, 918, 919, 920, 921, 922, 923, 924, 925, 926, 927, 928, 929, 930, 931, 932, 933, 934, 935, 936, 937, 938, 939, 940, 941, 942, 943, 944, 945, 946, 947, 948, 949, 950, 951, 952, 953, 954, 955, 956, 957, 958, 959, 960, 961, 962, 963, 964, 965, 966, 967, 968, 969, 970, 971, 972, 973, 974, 975, 976, 977, 978, 979, 980, 981, 982, 983, 984, 985, 986, 987, 988, 989, 990, 991, 992, 993, 994, 995, 996, 997, 998, 999, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 1015, 1016, 1017, 1018, 1019, 1020, 1021, 1022, 1023, 0};
__constant__ unsigned chainStride64[1024] = {16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240, 241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255, 256, 257, 258, 259, 260, 261, 262, 263, 264, 265, 266, 267, 268, 269, 270, 271, 272, 273, 274, 275, 276, 277, 278, 279, 280, 281, 282, 283, 284, 285, 286, 287, 288, 289, 290, 291, 292, 293, 294, 295, 296, 297, 298, 299, 300, 301, 302, 303, 304, 305, 306, 307, 308, 309, 310, 311, 312, 313, 314, 315, 316, 317, 318, 319, 320, 321, 322, 323, 324, 325, 326, 327, 328, 329, 330, 331, 332, 333, 334, 335, 336, 337, 338, 339, 340, 341, 342, 343, 344, 345, 346, 347, 348, 349, 350, 351, 352, 353, 354, 355, 356, 357, 358, 359, 360, 361, 362, 363, 364, 365, 366, 367, 368, 369, 370, 371, 372, 373, 374, 375, 376, 377, 378, 379, 380, 381, 382, 383, 384, 385, 386, 387, 388, 389, 390, 391, 392, 393, 394, 395, 396, 397, 398, 399, 400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 418, 419, 420, 421, 422, 423, 424, 425, 426, 427, 428, 429, 430, 431, 432, 433, 434, 435, 436, 437, 438, 439, 440, 441, 442, 443, 444, 445, 446, 447, 448, 449, 450, 451, 452, 453, 454, 455, 456, 457, 458, 459, 460, 461, 462, 463, 464, 465, 466, 467, 468, 469, 470, 471, 472, 473, 474, 475, 476, 477, 478, 479, 480, 481, 482, 483, 484, 485, 486, 487, 488, 489, 490, 491, 492, 493, 494, 495, 496, 497, 498, 499, 500, 501, 502, 503, 504, 505, 506, 507, 508, 509, 510, 511, 512, 513, 514, 515, 516, 517, 518, 519, 520, 521, 522, 523, 524, 525, 526, 527, 528, 529, 530, 531, 532, 533, 534, 535, 536, 537, 538, 539, 540, 541, 542, 543, 544, 545, 546, 547, 548, 549, 550, 551, 552, 553, 554, 555, 556, 557, 558, 559, 560, 561, 562, 563, 564, 565, 566, 567, 568, 569, 570, 571, 572, 573, 574, 575, 576, 577, 578, 579, 580, 581, 582, 583, 584, 585, 586, 587, 588, 589, 590, 591, 592, 593, 594, 595, 596, 597, 598, 599, 600, 601, 602, 603, 604, 605, 606, 607, 608, 609, 610, 611, 612, 613, 614, 615, 616, 617, 618, 619, 620, 621, 622, 623, 624, 625, 626, 627, 628, 629, 630, 631, 632, 633, 634, 635, 636, 637, 638, 639, 640, 641, 642, 643, 644, 645, 646, 647, 648, 649, 650, 651, 652, 653, 654, 655, 656, 657, 658, 659, 660, 661, 662, 663, 664, 665, 666, 667, 668, 669, 670, 671, 672, 673, 674, 675, 676, 677, 678, 679, 680, 681, 682, 683, 684, 685, 686, 687, 688, 689, 690, 691, 692, 693, 694, 695, 696, 697, 698, 699, 700, 701, 702, 703, 704, 705, 706, 707, 708, 709, 710, 711, 712, 713, 714, 715, 716, 717, 718, 719, 720, 721, 722, 723, 724, 725, 726, 727, 728, 729, 730, 731, 732, 733, 734, 735, 736, 737, 738, 739, 740, 741, 742, 743, 744, 745, 746, 747, 748, 749, 750, 751, 752, 753, 754, 755, 756, 757, 758, 759, 760, 761, 762, 763, 764, 765, 766, 767, 768, 769, 770, 771, 772, 773, 774, 775, 776, 777, 778, 779, 780, 781, 782, 783, 784, 785, 786, 787, 788, 789, 790, 791, 792, 793, 794, 795, 796, 797, 798, 799, 800, 801, 802, 803, 804, 805, 806, 807, 808, 809, 810, 811, 812, 813, 814, 815, 816, 817, 818, 819, 820, 821, 822, 823, 824, 825, 826, 827, 828, 829, 830, 831, 832, 833, 834, 835, 836, 837, 838, 839, 840, 841, 842, 843, 844, 845, 846, 847, 848, 849, 850, 851, 852, 853, 854, 855, 856, 857, 858, 859, 860, 861, 862, 863, 864, 865, 866, 867, 868, 869, 870, 871, 872, 873, 874, 875, 876, 877, 878, 879, 880, 881, 882, 883, 884, 885, 886, 887, 888, 889, 890, 891, 892, 893, 894, 895, 896, 897, 898, 899, 900, 901, 902, 903, 904, 905, 906, 907, 908, 909, 910, 911, 912, 913, 914, 915, 916, 917, 918, 919, 920, 921, 922, 923, 924, 925, 926, 927, 928, 929, 930, 931, 932, 933, 934, 935, 936, 937, 938, 939, 940, 941, 942, 943, 944, 945, 946, 947, 948, 949, 950, 951, 952, 953, 954, 955, 956, 957, 958, 959, 960, 961, 962, 963, 964, 965, 966, 967, 968, 969, 970, 971, 972, 973, 974, 975, 976, 977, 978, 979, 980, 981, 982, 983, 984, 985, 986, 987, 988, 989, 990, 991, 992, 993, 994, 995, 996, 997, 998, 999, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 1015, 1016, 1017, 1018, 1019, 1020, 1021, 1022, 1023, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
__constant__ unsigned chainStride256[1024] = {64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240, 241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255, 256, 257, 258, 259, 260, 261, 262, 263, 264, 265, 266, 267, 268, 269, 270, 271, 272, 273, 274, 275, 276, 277, 278, 279, 280, 281, 282, 283, 284, 285, 286, 287, 288, 289, 290, 291, 292, 293, 294, 295, 296, 297, 298, 299, 300, 301, 302, 303, 304, 305, 306, 307, 308, 309, 310, 311, 312, 313, 314, 315, 316, 317, 318, 319, 320, 321, 322, 323, 324, 325, 326, 327, 328, 329, 330, 331, 332, 333, 334, 335, 336, 337, 338, 339, 340, 341, 342, 343, 344, 345, 346, 347, 348, 349, 350, 351, 352, 353, 354, 355, 356, 357, 358, 359, 360, 361, 362, 363, 364, 365, 366, 367, 368, 369, 370, 371, 372, 373, 374, 375, 376, 377, 378, 379, 380, 381, 382, 383, 384, 385, 386, 387, 388, 389, 390, 391, 392, 393, 394, 395, 396, 397, 398, 399, 400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 418, 419, 420, 421, 422, 423, 424, 425, 426, 427, 428, 429, 430, 431, 432, 433, 434, 435, 436, 437, 438, 439, 440, 441, 442, 443, 444, 445, 446, 447, 448, 449, 450, 451, 452, 453, 454, 455, 456, 457, 458, 459, 460, 461, 462, 463, 464, 465, 466, 467, 468, 469, 470, 471, 472, 473, 474, 475, 476, 477, 478, 479, 480, 481, 482, 483, 484, 485, 486, 487, 488, 489, 490, 491, 492, 493, 494, 495, 496, 497, 498, 499, 500, 501, 502, 503, 504, 505, 506, 507, 508, 509, 510, 511, 512, 513, 514, 515, 516, 517, 518, 519, 520, 521, 522, 523, 524, 525, 526, 527, 528, 529, 530, 531, 532, 533, 534, 535, 536, 537, 538, 539, 540, 541, 542, 543, 544, 545, 546, 547, 548, 549, 550, 551, 552, 553, 554, 555, 556, 557, 558, 559, 560, 561, 562, 563, 564, 565, 566, 567, 568, 569, 570, 571, 572, 573, 574, 575, 576, 577, 578, 579, 580, 581, 582, 583, 584, 585, 586, 587, 588, 589, 590, 591, 592, 593, 594, 595, 596, 597, 598, 599, 600, 601, 602, 603, 604, 605, 606, 607, 608, 609, 610, 611, 612, 613, 614, 615, 616, 617, 618, 619, 620, 621, 622, 623, 624, 625, 626, 627, 628, 629, 630, 631, 632, 633, 634, 635, 636, 637, 638, 639, 640, 641, 642, 643, 644, 645, 646, 647, 648, 649, 650, 651, 652, 653, 654, 655, 656, 657, 658, 659, 660, 661, 662, 663, 664, 665, 666, 667, 668, 669, 670, 671, 672, 673, 674, 675, 676, 677, 678, 679, 680, 681, 682, 683, 684, 685, 686, 687, 688, 689, 690, 691, 692, 693, 694, 695, 696, 697, 698, 699, 700, 701, 702, 703, 704, 705, 706, 707, 708, 709, 710, 711, 712, 713, 714, 715, 716, 717, 718, 719, 720, 721, 722, 723, 724, 725, 726, 727, 728, 729, 730, 731, 732, 733, 734, 735, 736, 737, 738, 739, 740, 741, 742, 743, 744, 745, 746, 747, 748, 749, 750, 751, 752, 753, 754, 755, 756, 757, 758, 759, 760, 761, 762, 763, 764, 765, 766, 767, 768, 769, 770, 771, 772, 773, 774, 775, 776, 777, 778, 779, 780, 781, 782, 783, 784, 785, 786, 787, 788, 789, 790, 791, 792, 793, 794, 795, 796, 797, 798, 799, 800, 801, 802, 803, 804, 805, 806, 807, 808, 809, 810, 811, 812, 813, 814, 815, 816, 817, 818, 819, 820, 821, 822, 823, 824, 825, 826, 827, 828, 829, 830, 831, 832, 833, 834, 835, 836, 837, 838, 839, 840, 841, 842, 843, 844, 845, 846, 847, 848, 849, 850, 851, 852, 853, 854, 855, 856, 857, 858, 859, 860, 861, 862, 863, 864, 865, 866, 867, 868, 869, 870, 871, 872, 873, 874, 875, 876, 877, 878, 879, 880, 881, 882, 883, 884, 885, 886, 887, 888, 889, 890, 891, 892, 893, 894, 895, 896, 897, 898, 899, 900, 901, 902, 903, 904, 905, 906, 907, 908, 909, 910, 911, 912, 913, 914, 915, 916, 917, 918, 919, 920, 921, 922, 923, 924, 925, 926, 927, 928, 929, 930, 931, 932, 933, 934, 935, 936, 937, 938, 939, 940, 941, 942, 943, 944, 945, 946, 947, 948, 949, 950, 951, 952, 953, 954, 955, 956, 957, 958, 959, 960, 961, 962, 963, 964, 965, 966, 967, 968, 969, 970, 971, 972, 973, 974, 975, 976, 977, 978, 979, 980, 981, 982, 983, 984, 985, 986, 987, 988, 989, 990, 991, 992, 993, 994, 995, 996, 997, 998, 999, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 1015, 1016, 1017, 1018, 1019, 1020, 1021, 1022, 1023, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63};

#define CONSTANT_CHASE(kernel, chain)                                               \
  extern "C" __global__ void kernel(unsigned long long* cycles, unsigned* out) {    \
    unsigned index = 0;                                                             \
    long long start = clock64();                                                    \
    _Pragma("unroll") for (int k = 0; k < 16; k++) index = chain[index];           \
    long long cold = clock64();                                                     \
    index = index & 0x3ff & (index >> 16);                                          \
    _Pragma("unroll") for (int k = 0; k < 16; k++) index = chain[index];           \
    long long warm = clock64();                                                     \
    if (threadIdx.x == 0) {                                                         \
      cycles[0] = cold - start;                                                     \
      cycles[1] = warm - cold;                                                      \
      out[0] = index;                                                               \
    }                                                                               \
  }

CONSTANT_CHASE(constantChase4, chainStride4)
CONSTANT_CHASE(constantChase64, chainStride64)
CONSTANT_CHASE(constantChase256, chainStride256)

// Code that runs once, straight through: `rounds` rounds of eight
// funnel shifts over eight registers, a 128-byte line of SASS a round, so
// that the instruction cache misses on every line; and the same rounds in
// a loop, whose body the cache holds after its first pass.
__device__ __forceinline__ void shiftRound(unsigned (&r)[8], unsigned amount) {
#pragma unroll
  for (int j = 0; j < 8; j++) r[j] = __funnelshift_l(r[j], r[(j + 1) & 7], amount);
}

template <int ROUNDS>
__device__ void straightCode(unsigned long long* cycles, unsigned* out, unsigned amount) {
  unsigned r[8];
#pragma unroll
  for (int j = 0; j < 8; j++) r[j] = threadIdx.x * (j + 3);
  long long start = clock64();
#pragma unroll
  for (int i = 0; i < ROUNDS; i++) shiftRound(r, amount);
  long long end = clock64();
  unsigned sum = 0;
#pragma unroll
  for (int j = 0; j < 8; j++) sum ^= r[j];
  out[threadIdx.x] = sum;
  if (threadIdx.x == 0) cycles[0] = end - start;
}

extern "C" __global__ void straightCode64(unsigned long long* cycles, unsigned* out, unsigned amount) {
  straightCode<64>(cycles, out, amount);
}

extern "C" __global__ void straightCode256(unsigned long long* cycles, unsigned* out, unsigned amount) {
  straightCode<256>(cycles, out, amount);
}

extern "C" __global__ void loopedCode(unsigned long long* cycles, unsigned* out, unsigned amount, int rounds) {
  unsigned r[8];
#pragma unroll
  for (int j = 0; j < 8; j++) r[j] = threadIdx.x * (j + 3);
  long long start = clock64();
#pragma unroll 1
  for (int i = 0; i < rounds; i++) shiftRound(r, amount);
  long long end = clock64();
  unsigned sum = 0;
#pragma unroll
  for (int j = 0; j < 8; j++) sum ^= r[j];
  out[threadIdx.x] = sum;
  if (threadIdx.x == 0) cycles[0] = end - start;
}
