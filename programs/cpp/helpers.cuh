// A header of the user's own, found beside the source.
#pragma once
template <typename T>
__device__ __forceinline__ T twice(T value) { return value + value; }
