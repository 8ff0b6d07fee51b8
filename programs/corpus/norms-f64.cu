// Double precision: the Euclidean norm of each row of 8 doubles (sqrt in
// double), and the sum of all norms by atomicAdd on a double.
extern "C" __global__ void row_norms_f64(const double* rows, double* norms, double* total, int nrows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < nrows) {
    double s = 0.0;
    for (int k = 0; k < 8; k++) s += rows[r * 8 + k] * rows[r * 8 + k];
    double norm = sqrt(s);
    norms[r] = norm;
    atomicAdd(total, norm);
  }
}
