// The GVLE CUDA encoder (vle/encode_cuda.h) against its CPU twin encode_ref, bit for bit, for every
// kernel variant: payload, chunk index and total; outputs canary-filled first (bytes past the padded
// payload must keep the canary); tile edges (1, 31, 32, 33, block-input -1/=/+1, many blocks,
// several chunks), extreme tables, random and skewed data, the Canterbury corpus.
// Seed: printed; set it with --seed=N or GPUEC_SEED=N. Under compute-sanitizer the large inputs
// are cut to kSanitizerCap bytes (the sanitizers run every kernel tens to hundreds of times slower).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "canary.h"
#include "gpu_test.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "bench_kernels/gvle_encode_variants.h"
#include "gpu/device.h"
#include "vle/encode.h"
#include "vle/encode_cuda.h"
#include "vle/huffman.h"
#include "vle_inputs.h"

namespace {


using gpuec_test::kCanary;
constexpr uint64_t kSanitizerCap = 96 * 1024;

uint32_t test_seed() { return gpuec_test::test_seed("encode_cuda_test"); }

using gpuec_test::under_sanitizer;

uint64_t cap(uint64_t n) { return under_sanitizer() ? std::min(n, kSanitizerCap) : n; }

vle::CodeTable huffman_table(const uint8_t* data, uint64_t n) {
  uint64_t counts[256];
  vle::histogram_ref(data, n, counts);
  vle::CodeTable t;
  EXPECT_EQ(vle::build_code(counts, vle::kMaxCodeLength, &t), 0);
  return t;
}

// Not a prefix code, which the encoder does not care about: any lengths 1..16, any codes.
vle::CodeTable arbitrary_table(std::mt19937& rng, int min_len, int max_len) {
  vle::CodeTable t;
  for (int s = 0; s < 256; ++s) {
    t.len[s] = static_cast<uint8_t>(min_len + rng() % (max_len - min_len + 1));
    t.code[s] = static_cast<uint16_t>(rng() & ((1u << t.len[s]) - 1));
  }
  return t;
}

std::vector<uint8_t> random_bytes(std::mt19937& rng, uint64_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

// Geometric-like: byte k with probability about 2^-(k/4 + 1), as text and residuals are skewed.
std::vector<uint8_t> skewed_bytes(std::mt19937& rng, uint64_t n) {
  std::vector<uint8_t> v(n);
  std::geometric_distribution<int> g(0.18);
  for (auto& b : v) b = static_cast<uint8_t>(std::min(g(rng), 255));
  return v;
}

std::string shared_dir() {
  const char* d = std::getenv("GPUEC_SHARED_DIR");
  return d ? d : "";
}

// A corpus file, plain or as NAME.xz (through `xz -dc`); empty when neither can be read.
std::vector<uint8_t> read_corpus(const std::string& name) { return vle_test::read_canterbury(shared_dir(), name); }

// One comparison: encode_ref, then the CUDA variant on canary-filled device buffers.
struct Case {
  const uint8_t* in;
  uint64_t n;
  const vle::CodeTable* table;
  std::string what;
  uint64_t misalign = 0;  // place the input this many bytes past a 256-byte boundary
};

uint32_t code_len(const vle::CodeTable& t, uint8_t s) { return t.len[s] <= vle::kMaxCodeLength ? t.len[s] : 0; }

// The symbol whose code holds stream bit `bit` (walks the lengths from the chunk start).
std::string locate_bit(const Case& c, const std::vector<uint64_t>& chunks, uint64_t bit, int threads) {
  uint64_t k = 0;
  while (k + 1 < chunks.size() && chunks[k + 1] <= bit) ++k;
  uint64_t pos = chunks.empty() ? 0 : chunks[k];
  for (uint64_t i = k * vle::kChunkSymbols; i < c.n; ++i) {
    const uint32_t l = code_len(*c.table, c.in[i]);
    if (bit < pos + l) {
      const uint64_t block_symbols = uint64_t(threads) * 32;
      char s[256];
      std::snprintf(s, sizeof s,
                    "symbol %llu (value %u, code length %u, bits [%llu, %llu)), block-input %llu, thread %llu, "
                    "symbol %llu of the thread",
                    (unsigned long long)i, c.in[i], l, (unsigned long long)pos, (unsigned long long)(pos + l),
                    (unsigned long long)(i / block_symbols), (unsigned long long)(i % block_symbols / 32),
                    (unsigned long long)(i % 32));
      return s;
    }
    pos += l;
  }
  return "past the last code (padding)";
}

struct DeviceBuffers {
  void* p[5] = {};
  ~DeviceBuffers() {
    for (void* q : p)
      if (q) cudaFree(q);
  }
};

void check_case(const Case& c, int variant) {
  const gpuec_bench::EncodeCudaVariant var = gpuec_bench::encode_cuda_variant(variant);
  SCOPED_TRACE(c.what + ", n " + std::to_string(c.n) + ", variant " + var.name);
  const uint64_t bound = vle::encoded_bound_bytes(c.n);
  const uint64_t chunks = vle::chunk_count(c.n);

  std::vector<uint8_t> ref(bound + 8, kCanary);
  std::vector<uint64_t> ref_chunks(chunks + 1, 0);
  const uint64_t ref_bits = vle::encode_ref(c.in, c.n, *c.table, ref.data(), ref_chunks.data());

  constexpr uint64_t kGuard = 64;
  DeviceBuffers d;
  const size_t ws = gpuec_bench::encode_cuda_variant_workspace_bytes(c.n);
  ASSERT_EQ(cudaMalloc(&d.p[0], c.n + c.misalign + 16), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d.p[1], bound + kGuard), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d.p[2], (chunks + 1) * 8), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d.p[3], 8), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d.p[4], ws + 256), cudaSuccess);
  uint8_t* const d_in = static_cast<uint8_t*>(d.p[0]) + c.misalign;
  if (c.n) {
    ASSERT_EQ(cudaMemcpy(d_in, c.in, c.n, cudaMemcpyHostToDevice), cudaSuccess);
  }
  ASSERT_EQ(cudaMemset(d.p[1], kCanary, bound + kGuard), cudaSuccess);
  ASSERT_EQ(cudaMemset(d.p[2], kCanary, (chunks + 1) * 8), cudaSuccess);
  ASSERT_EQ(cudaMemset(d.p[3], kCanary, 8), cudaSuccess);
  ASSERT_EQ(cudaMemset(d.p[4], kCanary, ws + 256), cudaSuccess);  // the call must clear what it uses

  const gpu::CudaError err = gpuec_bench::encode_cuda_variant_run(
      variant, 0, d_in, c.n, *c.table, static_cast<uint8_t*>(d.p[1]), static_cast<uint64_t*>(d.p[2]),
      static_cast<uint64_t*>(d.p[3]), d.p[4], ws, nullptr);
  ASSERT_FALSE(err) << err.str();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  std::vector<uint8_t> got(bound + kGuard);
  std::vector<uint64_t> got_chunks(chunks + 1);
  uint64_t got_bits = 0;
  ASSERT_EQ(cudaMemcpy(got.data(), d.p[1], got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(got_chunks.data(), d.p[2], got_chunks.size() * 8, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(&got_bits, d.p[3], 8, cudaMemcpyDeviceToHost), cudaSuccess);

  ASSERT_EQ(got_bits, ref_bits) << "total bits";
  // Bytes past the bound are never written, whatever the input.
  for (uint64_t i = bound; i < bound + kGuard; ++i)
    ASSERT_EQ(got[i], kCanary) << "canary past the bound overwritten at byte " << i;
  if (ref_bits == UINT64_MAX) return;  // payload and chunk index unspecified

  const uint64_t padded = (ref_bits + 31) / 32 * 4;
  for (uint64_t i = 0; i < padded; ++i) {
    if (got[i] != ref[i]) {
      const int b = __builtin_clz(static_cast<uint32_t>(got[i] ^ ref[i]) << 24);
      const uint64_t bit = i * 8 + b;
      FAIL() << "first differing bit " << bit << " (byte " << i << ": got 0x" << std::hex << int(got[i])
             << ", expected 0x" << int(ref[i]) << std::dec << ") of " << ref_bits << " bits; "
             << locate_bit(c, std::vector<uint64_t>(ref_chunks.begin(), ref_chunks.begin() + chunks), bit,
                           var.threads)
             << "; seed " << test_seed();
    }
  }
  for (uint64_t i = padded; i < bound + kGuard; ++i)
    ASSERT_EQ(got[i], kCanary) << "canary past the padded payload overwritten at byte " << i << " (payload "
                               << padded << " bytes)";
  for (uint64_t k = 0; k < chunks; ++k) ASSERT_EQ(got_chunks[k], ref_chunks[k]) << "chunk_bits[" << k << "]";
  uint64_t canary64;
  std::memset(&canary64, kCanary, 8);
  ASSERT_EQ(got_chunks[chunks], canary64) << "chunk index written past chunk_count(n)";
}

// Every variant; under compute-sanitizer only the default one (SanitizedVariants covers the rest).
void check_all_variants(const Case& c) {
  for (int v = 0; v < gpuec_bench::encode_cuda_variant_count(); ++v) {
    if (under_sanitizer() && v != gpuec_bench::encode_cuda_default_variant()) continue;
    check_case(c, v);
    if (::testing::Test::HasFailure()) return;
  }
}

struct NamedTable {
  const vle::CodeTable* table;
  const char* what;
};

// check_all_variants of the first m symbols of data with each table, for each m of sizes.
void check_prefixes(const std::vector<uint8_t>& data, const std::vector<uint64_t>& sizes,
                    std::initializer_list<NamedTable> tables) {
  for (uint64_t m : sizes)
    for (const NamedTable& t : tables) {
      check_all_variants({data.data(), m, t.table, t.what});
      if (::testing::Test::HasFailure()) return;
    }
}

TEST(EncodeCuda, ReportsSetup) {
  REQUIRE_GPU();
  std::printf("device: %s; seed %u; under compute-sanitizer: %s\n", gpu::device_description().c_str(), test_seed(),
              under_sanitizer() ? "yes (large inputs cut)" : "no");
  for (int v = 0; v < gpuec_bench::encode_cuda_variant_count(); ++v)
    std::printf("variant %d: %s%s\n", v, gpuec_bench::encode_cuda_variant(v).name,
                v == gpuec_bench::encode_cuda_default_variant() ? " (default)" : "");
}

TEST(EncodeCuda, EmptyInputWritesOnlyTheTotal) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed());
  const vle::CodeTable t = arbitrary_table(rng, 1, 16);
  const uint8_t dummy = 0;
  check_all_variants({&dummy, 0, &t, "empty"});
  uint64_t bits = 123;
  const gpu::CudaError e = vle::encode_cuda_host(nullptr, 0, t, nullptr, nullptr, &bits);
  ASSERT_FALSE(e) << e.str();
  EXPECT_EQ(bits, 0u);
}

TEST(EncodeCuda, TileEdges) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 1);
  const vle::CodeTable t = arbitrary_table(rng, 1, 16);
  const std::vector<uint8_t> data = random_bytes(rng, 4 * vle::kChunkSymbols + 100);
  std::vector<uint64_t> sizes = {1, 2, 3, 31, 32, 33, 63, 64, 65, 1000};
  for (int v = 0; v < gpuec_bench::encode_cuda_variant_count(); ++v) {
    const uint64_t bs = uint64_t(gpuec_bench::encode_cuda_variant(v).threads) * 32;
    for (uint64_t m : {bs - 1, bs, bs + 1, 2 * bs - 1, 2 * bs, 2 * bs + 1, 32 * bs + 1, 33 * bs + 7})
      if (m <= data.size()) sizes.push_back(m);
  }
  for (uint64_t m : {vle::kChunkSymbols - 1, vle::kChunkSymbols, vle::kChunkSymbols + 1, 3 * vle::kChunkSymbols + 17})
    sizes.push_back(m);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  if (under_sanitizer()) sizes = {1, 33, 4095, 4097, 8193, 16385, 65537};
  for (uint64_t m : sizes) {
    check_all_variants({data.data(), m, &t, "random bytes, random lengths 1..16"});
    if (HasFailure()) return;
  }
}

// Each kernel instantiation once on a multi-block input with a tail (and, with a table that has
// unused symbols, the checking kernels), also under the sanitizers.
TEST(EncodeCuda, SanitizedVariants) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 9);
  const std::vector<uint8_t> data = skewed_bytes(rng, 3 * 16384 + 77);
  const vle::CodeTable full = arbitrary_table(rng, 1, 16);
  const vle::CodeTable huff = huffman_table(data.data(), data.size());
  for (int v = 0; v < gpuec_bench::encode_cuda_variant_count(); ++v) {
    check_case({data.data(), data.size(), &full, "all symbols coded"}, v);
    check_case({data.data(), data.size(), &huff, "Huffman with unused symbols"}, v);
    if (HasFailure()) return;
  }
}

TEST(EncodeCuda, UnalignedInput) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 2);
  const vle::CodeTable t = arbitrary_table(rng, 1, 16);
  const std::vector<uint8_t> data = random_bytes(rng, 70000);
  for (uint64_t mis : {1, 3, 4, 8, 15})
    for (uint64_t m : {1ull, 33ull, 4097ull, 70000ull}) {
      if (under_sanitizer() && mis != 3) continue;
      Case c{data.data(), m, &t, "input misaligned by " + std::to_string(mis)};
      c.misalign = mis;
      check_all_variants(c);
      if (HasFailure()) return;
    }
}

TEST(EncodeCuda, OneSymbolAlphabet) {
  REQUIRE_GPU();
  // Huffman gives the single symbol 1 bit: every block code is exactly block-input bits long, so
  // all block boundaries are word aligned (no edge merges). Then 3 bits: no boundary is aligned.
  const std::vector<uint8_t> data(200000, 'a');
  const vle::CodeTable huff = huffman_table(data.data(), data.size());
  EXPECT_EQ(huff.len['a'], 1);
  vle::CodeTable three = huff;
  three.len['a'] = 3;
  three.code['a'] = 5;
  std::vector<uint64_t> sizes{1, 31, 32, 4096, 65536, 200000};
  if (under_sanitizer()) sizes = {1, 31, 4096, 65536};
  check_prefixes(data, sizes, {{&huff, "one symbol, 1 bit"}, {&three, "one symbol, 3 bits"}});
}

TEST(EncodeCuda, All256SymbolsAnd16BitCodes) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 3);
  std::vector<uint8_t> data(3 * 65536 + 5);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + (i >> 8));
  const vle::CodeTable uniform = huffman_table(data.data(), data.size());  // 8 bits each
  const vle::CodeTable sixteen = arbitrary_table(rng, 16, 16);             // the longest block codes
  const vle::CodeTable mixed = arbitrary_table(rng, 15, 16);
  check_prefixes(data, {256, 4097, cap(data.size())},
                 {{&uniform, "all 256 symbols, Huffman"}, {&sixteen, "16-bit codes"}, {&mixed, "15- and 16-bit codes"}});
}

TEST(EncodeCuda, RandomAndSkewedData) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 4);
  const uint64_t n = cap(3 * 1000 * 1000 + 13);
  const std::vector<uint8_t> rnd = random_bytes(rng, n);
  const std::vector<uint8_t> skew = skewed_bytes(rng, n);
  const vle::CodeTable t_rnd = arbitrary_table(rng, 1, 16);
  const vle::CodeTable h_rnd = huffman_table(rnd.data(), n);
  const vle::CodeTable h_skew = huffman_table(skew.data(), n);
  check_all_variants({rnd.data(), n, &t_rnd, "random bytes, random lengths"});
  check_all_variants({rnd.data(), n, &h_rnd, "random bytes, Huffman"});
  check_all_variants({skew.data(), n, &h_skew, "skewed bytes, Huffman"});
}

TEST(EncodeCuda, ManyRandomSmallCases) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 5);
  const int cases = under_sanitizer() ? 6 : 60;
  for (int i = 0; i < cases; ++i) {
    const uint64_t n = cap(1 + rng() % (rng() % 2 ? 300000 : 5000));
    const std::vector<uint8_t> data = rng() % 2 ? random_bytes(rng, n) : skewed_bytes(rng, n);
    const vle::CodeTable t = rng() % 2 ? arbitrary_table(rng, 1, 1 + rng() % 16) : huffman_table(data.data(), n);
    check_case({data.data(), n, &t, "random case " + std::to_string(i)}, static_cast<int>(rng() % gpuec_bench::encode_cuda_variant_count()));
    if (HasFailure()) return;
  }
}

TEST(EncodeCuda, SymbolWithoutCodeGivesMaxTotal) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 6);
  std::vector<uint8_t> data = skewed_bytes(rng, cap(300000));
  vle::CodeTable t = huffman_table(data.data(), data.size());
  for (int s = 0; s < 256; ++s)
    if (t.len[s] == 0) t.code[s] = 0xFFFF;  // unused symbols: must not matter
  check_all_variants({data.data(), data.size(), &t, "table with unused symbols"});
  vle::CodeTable bad = t;
  bad.len[data[data.size() / 2]] = 0;
  check_all_variants({data.data(), data.size(), &bad, "a used symbol without code"});
  vle::CodeTable too_long = t;
  too_long.len[data.back()] = 17;
  check_all_variants({data.data(), data.size(), &too_long, "a used symbol with a 17-bit length"});
  data[5] = 0xFF;  // the very first block
  vle::CodeTable first = t;
  first.len[0xFF] = 0;
  check_all_variants({data.data(), data.size(), &first, "no code in the first block"});
}

TEST(EncodeCuda, CanterburyCorpus) {
  REQUIRE_GPU();
  const char* names[] = {"alice29.txt", "asyoulik.txt", "cp.html",     "fields.c", "grammar.lsp",
                         "kennedy.xls", "lcet10.txt",   "plrabn12.txt", "ptt5",     "sum",
                         "xargs.1",     "bible.txt",    "E.coli",       "world192.txt"};
  int found = 0;
  for (const char* name : names) {
    std::vector<uint8_t> data = read_corpus(name);
    if (data.empty()) {
      std::printf("corpus file %s not readable under %s/corpus/canterbury (plain or .xz)\n", name, shared_dir().c_str());
      continue;
    }
    ++found;
    const uint64_t n = cap(data.size());
    const vle::CodeTable t = huffman_table(data.data(), data.size());
    if (under_sanitizer()) {
      check_case({data.data(), n, &t, name}, gpuec_bench::encode_cuda_default_variant());
    } else {
      check_all_variants({data.data(), n, &t, name});
    }
    if (HasFailure()) return;
  }
  if (found == 0) GTEST_SKIP() << "skipped: no Canterbury file under " << shared_dir() << "/corpus/canterbury";
  std::printf("Canterbury: %d of 14 files compared\n", found);
}

TEST(EncodeCuda, HostWrapperMatchesRef) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 7);
  const uint64_t n = cap(1 << 20) + 3;
  const std::vector<uint8_t> data = skewed_bytes(rng, n);
  const vle::CodeTable t = huffman_table(data.data(), n);
  std::vector<uint8_t> ref(vle::encoded_bound_bytes(n), kCanary), got(vle::encoded_bound_bytes(n), kCanary);
  std::vector<uint64_t> ref_chunks(vle::chunk_count(n)), got_chunks(vle::chunk_count(n));
  const uint64_t ref_bits = vle::encode_ref(data.data(), n, t, ref.data(), ref_chunks.data());
  uint64_t got_bits = 0;
  const gpu::CudaError e = vle::encode_cuda_host(data.data(), n, t, got.data(), got_chunks.data(), &got_bits);
  ASSERT_FALSE(e) << e.str();
  ASSERT_EQ(got_bits, ref_bits);
  EXPECT_EQ(got, ref);
  EXPECT_EQ(got_chunks, ref_chunks);
}

TEST(EncodeCuda, ArgumentErrorsAreValues) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 8);
  const vle::CodeTable t = arbitrary_table(rng, 1, 16);
  DeviceBuffers d;
  const uint64_t n = 10000;
  const size_t ws = vle::encode_cuda_workspace_bytes(n);
  ASSERT_EQ(cudaMalloc(&d.p[0], n), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d.p[1], vle::encoded_bound_bytes(n) + 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d.p[3], 8), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d.p[4], ws), cudaSuccess);
  const uint8_t* in = static_cast<uint8_t*>(d.p[0]);
  uint8_t* out = static_cast<uint8_t*>(d.p[1]);
  uint64_t* total = static_cast<uint64_t*>(d.p[3]);
  gpu::CudaError e = vle::encode_cuda(in, n, t, out + 2, nullptr, total, d.p[4], ws, nullptr);
  EXPECT_EQ(e.code, static_cast<int>(cudaErrorInvalidValue)) << "misaligned out accepted";
  e = vle::encode_cuda(in, n, t, out, nullptr, total, d.p[4], ws - 1, nullptr);
  EXPECT_EQ(e.code, static_cast<int>(cudaErrorInvalidValue)) << "short workspace accepted";
  e = vle::encode_cuda(in, n, t, out, nullptr, total, nullptr, ws, nullptr);
  EXPECT_EQ(e.code, static_cast<int>(cudaErrorInvalidValue)) << "null workspace accepted";
  e = vle::encode_cuda(in, vle::kEncodeCudaMaxSymbols + 1, t, out, nullptr, total, d.p[4], ws, nullptr);
  EXPECT_EQ(e.code, static_cast<int>(cudaErrorInvalidValue)) << "oversized n accepted";
  EXPECT_NE(std::string(e.str()).find("cudaErrorInvalidValue"), std::string::npos) << e.str();
  e = vle::encode_cuda(in, n, t, out, nullptr, total, d.p[4], ws, nullptr);
  EXPECT_FALSE(e) << e.str();
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace

namespace {

// Inputs past 4 GiB: 64-bit symbol counts, offsets and chunk indices all the way (default variant;
// skipped under compute-sanitizer, where it would take hours, and on a GPU with too little memory).
TEST(EncodeCuda, InputBeyond4GiB) {
  REQUIRE_GPU();
  if (under_sanitizer()) GTEST_SKIP() << "skipped: too slow under compute-sanitizer (the plain run covers it)";
  const uint64_t n = (uint64_t{4} << 30) + 4099;
  size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  if (free_bytes < n + vle::encoded_bound_bytes(n) + (uint64_t{1} << 30))
    GTEST_SKIP() << "skipped: needs " << (n + vle::encoded_bound_bytes(n)) / (1 << 20) << " MiB of GPU memory";
  std::mt19937 rng(test_seed() + 6);
  const std::vector<uint8_t> block = skewed_bytes(rng, (uint64_t{1} << 20) + 7);  // not a power of two
  std::vector<uint8_t> in(n);
  for (uint64_t i = 0; i < n; i += block.size())
    std::memcpy(in.data() + i, block.data(), std::min<uint64_t>(block.size(), n - i));
  const vle::CodeTable t = huffman_table(block.data(), block.size());
  check_case({in.data(), n, &t, "4 GiB + 4099 skewed bytes"}, gpuec_bench::encode_cuda_default_variant());
}

}  // namespace
