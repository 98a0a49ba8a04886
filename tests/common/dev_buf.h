// tests/common/dev_buf.h: a device buffer owned by a GPU test (cudaMalloc of at least one element; a
// failed allocation is a test failure, the pointer then stays null).
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>

namespace gpuec_test {

template <class T>
struct DevBuf {
  T* p = nullptr;
  explicit DevBuf(size_t n) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&p), std::max<size_t>(n, 1) * sizeof(T)), cudaSuccess);
  }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};

}  // namespace gpuec_test
