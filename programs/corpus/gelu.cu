// GELU activation, tanh approximation (as in GPT-2 and BERT):
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), over 1024 floats in [-4, 4).
extern "C" __global__ void gelu_tanh(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = in[i] * 8.0f - 4.0f;
    float inner = 0.7978845608f * (x + 0.044715f * x * x * x);
    out[i] = 0.5f * x * (1.0f + tanhf(inner));
  }
}
