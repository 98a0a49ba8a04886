// gvle-bench-gpu: throughput of the GVLE CUDA encoder (vle/encode_cuda.h) and of the scan primitive
// (bench_kernels/scan.h), by the GVLE paper's protocol: each Canterbury file replicated to >= 100 MiB, one
// warm-up and 50 timed runs with CUDA events, kernel time with the data resident (the whole launch
// sequence: workspace clear + kernel), median per file; end-to-end time with pinned transfers
// (upload, encode, read the total, download the payload: host clock); GB/s of input bytes; the
// ratio to a device-to-device copy of the same bytes measured in the same run; every variant's
// output checked against encode_ref once. Then the scan alone, the paper's segmented atomic scan
// against CUB, on the code lengths of the same symbols and on two fixed sizes.
//
// usage: gvle-bench-gpu [--csv FILE] [--runs N] [--mib N] [--files a,b,...]
// Data: $GPUEC_SHARED_DIR/corpus/canterbury (plain or .xz). Not a test: exit status 1 only when an
// output differs from encode_ref or a CUDA call fails.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench_kernels/gvle_encode_variants.h"
#include "bench_kernels/scan.h"
#include "gpu/device.h"
#include "vle/encode.h"
#include "vle/encode_cuda.h"
#include "vle/huffman.h"
#include "bench_util.h"
#include "files.h"
#include "vle_inputs.h"

namespace {

#define CK(call) GPUEC_BENCH_CHECK_CUDA(call, 1)
#define CKE(call) GPUEC_BENCH_CHECK(call, 1)

const char* kFiles[] = {"alice29.txt", "asyoulik.txt", "cp.html", "fields.c", "grammar.lsp", "kennedy.xls", "lcet10.txt",
                        "plrabn12.txt", "ptt5", "sum", "xargs.1", "bible.txt", "E.coli", "world192.txt"};

using gpuec_bench::upper_median;

// Times `fn` (which enqueues on `s`): one warm-up, then `runs` runs between events; median in ms.
template <typename Fn>
double time_events(cudaStream_t s, int runs, Fn fn) {
  return upper_median(gpuec_bench::event_times_ms(s, 1, runs, fn, 1));
}

__global__ void code_lengths_kernel(const uint8_t* in, uint64_t n, const uint8_t* len_of, uint32_t* len) {
  __shared__ uint8_t s_len[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) s_len[i] = len_of[i];
  __syncthreads();
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    len[i] = s_len[in[i]];
}

double gbps(uint64_t bytes, double ms) { return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0; }

struct Row {
  std::string file;
  uint64_t size = 0, n = 0, bits = 0;
  std::vector<double> kernel_ms;  // per variant
  double copy_ms = 0, e2e_ms = 0, scan_paper_ms = 0, scan_cub_ms = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::string csv_path, only;
  int runs = 50;
  uint64_t target = uint64_t{100} << 20;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--csv" && i + 1 < argc) csv_path = argv[++i];
    else if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--mib" && i + 1 < argc) target = uint64_t(std::max(1, std::atoi(argv[++i]))) << 20;
    else if (a == "--files" && i + 1 < argc) only = "," + std::string(argv[++i]) + ",";
    else {
      std::fprintf(stderr, "usage: gvle-bench-gpu [--csv FILE] [--runs N] [--mib N] [--files a,b,...]\n");
      return 2;
    }
  }
  if (gpuec_bench::no_device("gvle-bench-gpu")) return 0;
  const char* sd = std::getenv("GPUEC_SHARED_DIR");
  const std::string dir = sd ? sd : GPUEC_DEFAULT_SHARED_DIR;
  std::printf("gvle-bench-gpu: %s, %d timed runs after 1 warm-up, files replicated to >= %llu MiB\n",
              gpu::device_description().c_str(), runs, (unsigned long long)(target >> 20));

  std::vector<std::pair<std::string, std::vector<uint8_t>>> files;
  for (const char* f : kFiles) {
    if (!only.empty() && only.find("," + std::string(f) + ",") == std::string::npos) continue;
    std::vector<uint8_t> v = vle_test::read_canterbury(dir, f);
    if (v.empty()) std::printf("  %s: not readable under %s/corpus/canterbury, skipped\n", f, dir.c_str());
    else files.emplace_back(f, std::move(v));
  }
  if (files.empty()) return 0;

  uint64_t max_n = 0;
  for (auto& f : files) max_n = std::max(max_n, (target + f.second.size() - 1) / f.second.size() * f.second.size());
  const int variants = gpuec_bench::encode_cuda_variant_count();
  const int def = gpuec_bench::encode_cuda_default_variant();

  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  uint8_t *d_in, *d_out, *d_copy, *d_lenof, *h_in, *h_out;
  uint64_t *d_chunks, *d_total, *d_off, *h_total, *h_chunks;
  uint32_t* d_len;
  void *d_ws, *d_scan_ws;
  const uint64_t bound = vle::encoded_bound_bytes(max_n);
  const size_t ws_bytes = gpuec_bench::encode_cuda_variant_workspace_bytes(max_n);
  const uint64_t scan_max = std::max<uint64_t>(max_n, uint64_t{1} << 28);
  const size_t scan_ws = std::max(gpuec_bench::scan_cuda_workspace_bytes(scan_max, gpuec_bench::ScanMethod::kSegmentedAtomic),
                                  gpuec_bench::scan_cuda_workspace_bytes(scan_max, gpuec_bench::ScanMethod::kCub));
  CK(cudaMalloc(&d_in, max_n));
  CK(cudaMalloc(&d_out, bound));
  CK(cudaMalloc(&d_copy, max_n));
  CK(cudaMalloc(&d_lenof, 256));
  CK(cudaMalloc(&d_chunks, vle::chunk_count(max_n) * 8));
  CK(cudaMalloc(&d_total, 8));
  CK(cudaMalloc(&d_off, scan_max * 8));
  CK(cudaMalloc(&d_len, scan_max * 4));
  CK(cudaMalloc(&d_ws, ws_bytes));
  CK(cudaMalloc(&d_scan_ws, scan_ws));
  CK(cudaMallocHost(&h_in, max_n));
  CK(cudaMallocHost(&h_out, bound));
  CK(cudaMallocHost(&h_total, 8));
  CK(cudaMallocHost(&h_chunks, vle::chunk_count(max_n) * 8));
  std::vector<uint8_t> ref(bound);
  std::vector<uint64_t> ref_chunks(vle::chunk_count(max_n)), got_chunks(vle::chunk_count(max_n));

  bool all_ok = true;
  std::vector<Row> rows;
  std::printf("\n%-13s %9s %6s", "file", "MiB", "bits/B");
  for (int v = 0; v < variants; ++v) std::printf(" %20s", gpuec_bench::encode_cuda_variant(v).name);
  std::printf(" %9s %7s %8s %8s %9s %9s\n", "copy GB/s", "ratio", "e2e ms", "e2e GB/s", "scan ms", "cub ms");

  for (auto& [name, data] : files) {
    Row r;
    r.file = name;
    r.size = data.size();
    const uint64_t reps = (target + data.size() - 1) / data.size();
    const uint64_t n = reps * data.size();
    r.n = n;
    for (uint64_t k = 0; k < reps; ++k) std::memcpy(h_in + k * data.size(), data.data(), data.size());
    uint64_t counts[256];
    vle::histogram_ref(data.data(), data.size(), counts);
    vle::CodeTable t;
    if (vle::build_code(counts, vle::kMaxCodeLength, &t) != 0) {
      std::printf("%s: build_code failed\n", name.c_str());
      return 1;
    }
    const uint64_t ref_bits = vle::encode_ref(h_in, n, t, ref.data(), ref_chunks.data());
    r.bits = ref_bits;
    const uint64_t payload = (ref_bits + 31) / 32 * 4;
    CK(cudaMemcpy(d_in, h_in, n, cudaMemcpyHostToDevice));

    for (int v = 0; v < variants; ++v) {
      CKE(gpuec_bench::encode_cuda_variant_run(v, 0, d_in, n, t, d_out, d_chunks, d_total, d_ws, ws_bytes, s));
      CK(cudaStreamSynchronize(s));
      uint64_t bits = 0;
      CK(cudaMemcpy(&bits, d_total, 8, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(h_out, d_out, payload, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(got_chunks.data(), d_chunks, vle::chunk_count(n) * 8, cudaMemcpyDeviceToHost));
      if (bits != ref_bits || std::memcmp(h_out, ref.data(), payload) != 0 ||
          !std::equal(got_chunks.begin(), got_chunks.begin() + vle::chunk_count(n), ref_chunks.begin())) {
        std::printf("%s: variant %s DIFFERS from encode_ref (bits %llu vs %llu)\n", name.c_str(),
                    gpuec_bench::encode_cuda_variant(v).name, (unsigned long long)bits, (unsigned long long)ref_bits);
        all_ok = false;
      }
      r.kernel_ms.push_back(time_events(s, runs, [&] {
        CKE(gpuec_bench::encode_cuda_variant_run(v, 0, d_in, n, t, d_out, d_chunks, d_total, d_ws, ws_bytes, s));
      }));
    }
    r.copy_ms = time_events(s, runs, [&] { CK(cudaMemcpyAsync(d_copy, d_in, n, cudaMemcpyDeviceToDevice, s)); });

    // End to end: pinned upload, encode, total back, payload back (host clock, median).
    {
      std::vector<double> ms;
      for (int k = 0; k <= runs; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        CK(cudaMemcpyAsync(d_in, h_in, n, cudaMemcpyHostToDevice, s));
        CKE(vle::encode_cuda(d_in, n, t, d_out, d_chunks, d_total, d_ws, ws_bytes, s));
        CK(cudaMemcpyAsync(h_total, d_total, 8, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        CK(cudaMemcpyAsync(h_out, d_out, (*h_total + 31) / 32 * 4, cudaMemcpyDeviceToHost, s));
        CK(cudaMemcpyAsync(h_chunks, d_chunks, vle::chunk_count(n) * 8, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        const auto t1 = std::chrono::steady_clock::now();
        if (k > 0) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
      r.e2e_ms = upper_median(ms);
      if (*h_total != ref_bits || std::memcmp(h_out, ref.data(), payload) != 0) {
        std::printf("%s: end-to-end output DIFFERS from encode_ref\n", name.c_str());
        all_ok = false;
      }
    }

    // The scan alone on this file's per-symbol code lengths.
    {
      CK(cudaMemcpy(d_lenof, t.len, 256, cudaMemcpyHostToDevice));
      code_lengths_kernel<<<1024, 256, 0, s>>>(d_in, n, d_lenof, d_len);
      CK(cudaGetLastError());
      double* out_ms[2] = {&r.scan_paper_ms, &r.scan_cub_ms};
      const gpuec_bench::ScanMethod ms[2] = {gpuec_bench::ScanMethod::kSegmentedAtomic, gpuec_bench::ScanMethod::kCub};
      for (int m = 0; m < 2; ++m) {
        *out_ms[m] = time_events(s, runs, [&] {
          CKE(gpuec_bench::exclusive_scan_cuda(d_len, n, d_off, d_total, d_scan_ws, scan_ws, ms[m], s));
        });
        uint64_t total = 0, off_last = 0;
        CK(cudaMemcpy(&total, d_total, 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(&off_last, d_off + (n - 1), 8, cudaMemcpyDeviceToHost));
        if (total != ref_bits || off_last + t.len[h_in[n - 1]] != ref_bits) {
          std::printf("%s: scan %s total %llu, expected %llu\n", name.c_str(), gpuec_bench::scan_method_name(ms[m]),
                      (unsigned long long)total, (unsigned long long)ref_bits);
          all_ok = false;
        }
      }
    }

    std::printf("%-13s %9.1f %6.3f", name.c_str(), n / 1048576.0, double(ref_bits) / n);
    for (int v = 0; v < variants; ++v) std::printf(" %20.1f", gbps(n, r.kernel_ms[v]));
    std::printf(" %9.1f %7.3f %8.3f %8.1f %9.3f %9.3f\n", gbps(n, r.copy_ms), r.copy_ms / r.kernel_ms[def], r.e2e_ms,
                gbps(n, r.e2e_ms), r.scan_paper_ms, r.scan_cub_ms);
    std::fflush(stdout);
    rows.push_back(r);
  }

  // Averages over the files (GB/s of input, arithmetic mean of the per-file medians).
  std::printf("%-13s %9s %6s", "AVERAGE GB/s", "", "");
  std::vector<double> avg(variants, 0);
  double copy_avg = 0, ratio_avg = 0, e2e_avg = 0, sp = 0, sc = 0;
  for (auto& r : rows) {
    for (int v = 0; v < variants; ++v) avg[v] += gbps(r.n, r.kernel_ms[v]) / rows.size();
    copy_avg += gbps(r.n, r.copy_ms) / rows.size();
    ratio_avg += r.copy_ms / r.kernel_ms[def] / rows.size();
    e2e_avg += gbps(r.n, r.e2e_ms) / rows.size();
    sp += gbps(r.n * 4, r.scan_paper_ms) / rows.size();
    sc += gbps(r.n * 4, r.scan_cub_ms) / rows.size();
  }
  for (int v = 0; v < variants; ++v) std::printf(" %20.1f", avg[v]);
  std::printf(" %9.1f %7.3f %8s %8.1f\n", copy_avg, ratio_avg, "", e2e_avg);
  std::printf("default variant %s: average %.1f GB/s = %.3f of the device-to-device copy (%.1f GB/s copied, %.1f "
              "GB/s read+write)\n",
              gpuec_bench::encode_cuda_variant(def).name, avg[def], ratio_avg, copy_avg, 2 * copy_avg);
  std::printf("scan of the per-symbol code lengths (GB/s of uint32 input): segmented-atomic %.1f, cub %.1f\n", sp, sc);

  // Occupancy sweep of the default variant on the largest-table file (blocks per SM cap).
  if (!rows.empty()) {
    auto& [name, data] = files.back();
    const uint64_t reps = (target + data.size() - 1) / data.size(), n = reps * data.size();
    for (uint64_t k = 0; k < reps; ++k) std::memcpy(h_in + k * data.size(), data.data(), data.size());
    CK(cudaMemcpy(d_in, h_in, n, cudaMemcpyHostToDevice));
    uint64_t counts[256];
    vle::histogram_ref(data.data(), data.size(), counts);
    vle::CodeTable t;
    vle::build_code(counts, vle::kMaxCodeLength, &t);
    std::printf("\nblocks-per-SM cap, %s x%llu (GB/s):", name.c_str(), (unsigned long long)reps);
    for (int v = 0; v < variants; ++v) {
      std::printf("\n  %-21s", gpuec_bench::encode_cuda_variant(v).name);
      for (int cap : {1, 2, 3, 4, 6, 8, 12, 16, 0}) {
        const double ms = time_events(s, runs, [&] {
          CKE(gpuec_bench::encode_cuda_variant_run(v, cap, d_in, n, t, d_out, d_chunks, d_total, d_ws, ws_bytes, s));
        });
        std::printf(" %s%d:%.0f", cap ? "" : "max", cap, gbps(n, ms));
      }
    }
    std::printf("\n");
  }

  // The scan alone at fixed sizes: the latency floor (131072 items) and a bandwidth case (2^28).
  std::printf("\nscan alone, random lengths 0..16 (median ms; GB/s counts the 4 bytes read and 8 written per item; "
              "compare with the copy's read+write GB/s above):\n");
  {
    std::mt19937 rng(1);
    std::vector<uint32_t> h(uint64_t{1} << 24);
    for (auto& x : h) x = rng() % 17;
    for (uint64_t off = 0; off < scan_max; off += h.size())
      CK(cudaMemcpy(d_len + off, h.data(), std::min<uint64_t>(h.size(), scan_max - off) * 4, cudaMemcpyHostToDevice));
    for (uint64_t items : {uint64_t{1} << 17, uint64_t{1} << 20, uint64_t{1} << 24, uint64_t{1} << 28}) {
      double ms[2];
      const gpuec_bench::ScanMethod m[2] = {gpuec_bench::ScanMethod::kSegmentedAtomic, gpuec_bench::ScanMethod::kCub};
      uint64_t totals[2];
      for (int k = 0; k < 2; ++k) {
        ms[k] = time_events(s, runs, [&] {
          CKE(gpuec_bench::exclusive_scan_cuda(d_len, items, d_off, d_total, d_scan_ws, scan_ws, m[k], s));
        });
        CK(cudaMemcpy(&totals[k], d_total, 8, cudaMemcpyDeviceToHost));
      }
      if (totals[0] != totals[1]) {
        std::printf("scan totals differ at %llu items\n", (unsigned long long)items);
        all_ok = false;
      }
      std::printf("  %10llu items: segmented-atomic %.4f ms (%.1f GB/s), cub %.4f ms (%.1f GB/s); cub/paper time %.2f\n",
                  (unsigned long long)items, ms[0], gbps(items * 12, ms[0]), ms[1], gbps(items * 12, ms[1]),
                  ms[1] / ms[0]);
    }
  }

  // CSV.
  std::string csv = "file,bytes,replicated_bytes,bits_per_symbol";
  for (int v = 0; v < variants; ++v) csv += std::string(",gbps_") + gpuec_bench::encode_cuda_variant(v).name;
  csv += ",kernel_ms_default,copy_gbps,default_to_copy_ratio,e2e_ms,e2e_gbps,scan_segmented_atomic_ms,scan_cub_ms\n";
  for (auto& r : rows) {
    char b[512];
    std::snprintf(b, sizeof b, "%s,%llu,%llu,%.4f", r.file.c_str(), (unsigned long long)r.size, (unsigned long long)r.n,
                  double(r.bits) / r.n);
    csv += b;
    for (int v = 0; v < variants; ++v) {
      std::snprintf(b, sizeof b, ",%.2f", gbps(r.n, r.kernel_ms[v]));
      csv += b;
    }
    std::snprintf(b, sizeof b, ",%.5f,%.2f,%.4f,%.4f,%.2f,%.5f,%.5f\n", r.kernel_ms[def], gbps(r.n, r.copy_ms),
                  r.copy_ms / r.kernel_ms[def], r.e2e_ms, gbps(r.n, r.e2e_ms), r.scan_paper_ms, r.scan_cub_ms);
    csv += b;
  }
  std::printf("\nCSV\n%s", csv.c_str());
  if (!csv_path.empty()) {  // tools/cli/files.h: a temporary file renamed onto FILE
    files::Output out;
    std::string why;
    if (!out.open(csv_path, files::Output::Options{}, &why) || !out.write(csv.data(), csv.size(), &why) ||
        !out.commit(&why)) {
      std::fprintf(stderr, "gvle-bench-gpu: %s\n", why.c_str());
      return 2;
    }
  }
  std::printf("%s\n", all_ok ? "all outputs match encode_ref" : "SOME OUTPUTS DIFFER");
  return all_ok ? 0 : 1;
}
