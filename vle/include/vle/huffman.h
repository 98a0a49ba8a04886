// vle/huffman.h: byte histograms and canonical, length-limited Huffman codes (CPU), shared by the
// GVLE encoder (CPU twin and CUDA kernel), the decoder and the gvle file format.
//
// Codes: every symbol s with len[s] > 0 has the code code[s], right-aligned in the 16-bit value and
// emitted most significant bit first. Lengths are at most kMaxCodeLength (16). Codes are canonical
// (H.264-style "shorter first, then by symbol value"): sorted by (length, symbol), each code is the
// previous one plus one, shifted left when the length grows; so the lengths alone define the code.
// A one-symbol alphabet gets length 1 (code 0). An empty alphabet has every length 0.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vle {

constexpr int kMaxCodeLength = 16;

struct CodeTable {
  uint16_t code[256];
  uint8_t len[256];  // 0: the symbol does not occur and cannot be encoded
};

// counts[s] = occurrences of byte value s in data[0, n). Overwrites counts.
void histogram_ref(const uint8_t* data, size_t n, uint64_t counts[256]);

// Optimal lengths under the limit (package-merge), then canonical codes. Deterministic: equal inputs
// give equal tables on every machine (ties broken by symbol value). Returns 0, or -1 when
// max_len < 1, max_len > kMaxCodeLength, or the alphabet needs more than 2^max_len codes.
int build_code(const uint64_t counts[256], int max_len, CodeTable* table);

// Canonical codes from lengths alone (the decoder's side). Returns 0, or -1 when a length exceeds
// kMaxCodeLength or the lengths over-subscribe the code space (Kraft sum > 1). An incomplete code
// (Kraft sum < 1) is accepted only for one used symbol of length 1. All lengths 0 (the empty
// alphabet of an empty input) is accepted: every code is then 0 and no symbol can be coded.
int canonical_code(const uint8_t len[256], CodeTable* table);

}  // namespace vle
