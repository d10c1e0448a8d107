// Reference for matmul.cpp: C = A * B (row-major, fp32) in plain loops, rows shared among the
// OpenMP threads. Used by matmul.json to verify every configuration.
extern "C" void matmul_ref(int M, int N, int K, const float* A, const float* B, float* C) {
#pragma omp parallel for schedule(static)
  for (int i = 0; i < M; ++i) {
    float* c = C + static_cast<long>(i) * N;
    for (int j = 0; j < N; ++j) c[j] = 0.0f;
    for (int k = 0; k < K; ++k) {
      const float a = A[static_cast<long>(i) * K + k];
      const float* b = B + static_cast<long>(k) * N;
      for (int j = 0; j < N; ++j) c[j] += a * b[j];
    }
  }
}
