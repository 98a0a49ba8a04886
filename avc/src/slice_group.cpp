// Slice group maps (avc/slice_group.h), written as close to 8.2.2.1-8.2.2.8 as possible.
#include "avc/slice_group.h"

#include <algorithm>

namespace avc {

bool check_slice_group_params(const Sps& sps, const Pps& pps, Error& err) {
  if (pps.num_slice_groups <= 1) return true;
  const uint32_t w = sps.pic_width_in_mbs;
  const uint32_t size = sps.pic_size_in_mbs();
  const int ngroups = pps.num_slice_groups;
  switch (pps.slice_group_map_type) {
    case 0:
      for (int g = 0; g < ngroups; ++g)
        if (pps.run_length[g] > size)
          return fail(err, Status::kMalformed, "PPS %u: run_length_minus1[%d] %u past the picture (%u macroblocks)",
                      pps.pic_parameter_set_id, g, pps.run_length[g] - 1, size);
      return true;
    case 2:
      for (int g = 0; g + 1 < ngroups; ++g) {
        const uint32_t tl = pps.top_left[g], br = pps.bottom_right[g];
        if (tl > br || br >= size || tl % w > br % w)
          return fail(err, Status::kMalformed,
                      "PPS %u: slice group %d box top_left %u, bottom_right %u does not fit the %ux%u-macroblock picture",
                      pps.pic_parameter_set_id, g, tl, br, w, sps.pic_height_in_map_units);
      }
      return true;
    case 3:
    case 4:
    case 5:
      if (pps.slice_group_change_rate > size)
        return fail(err, Status::kMalformed, "PPS %u: slice_group_change_rate_minus1 %u past the picture (%u macroblocks)",
                    pps.pic_parameter_set_id, pps.slice_group_change_rate - 1, size);
      return true;
    case 6:
      if (pps.pic_size_in_map_units != size || pps.slice_group_id.size() != size)
        return fail(err, Status::kMalformed, "PPS %u: pic_size_in_map_units_minus1 %u, the picture has %u macroblocks",
                    pps.pic_parameter_set_id, pps.pic_size_in_map_units - 1, size);
      return true;
    default:
      return true;  // 1: any picture
  }
}

int slice_group_change_cycle_bits(uint32_t pic_size, uint32_t rate) {
  // Smallest n with 2^n >= pic_size / rate + 1, i.e. rate * 2^n >= pic_size + rate.
  int n = 0;
  while ((uint64_t(rate) << n) < uint64_t(pic_size) + rate) ++n;
  return n;
}

void build_slice_group_map(const Sps& sps, const Pps& pps, uint32_t cycle, uint8_t* map) {
  const int64_t W = sps.pic_width_in_mbs;
  const int64_t H = sps.pic_height_in_map_units;
  const int64_t size = W * H;
  const int ngroups_minus1 = pps.num_slice_groups - 1;
  if (ngroups_minus1 == 0) {
    std::fill(map, map + size, uint8_t(0));
    return;
  }
  const int dir = pps.slice_group_change_direction_flag ? 1 : 0;
  const int64_t units0 = std::min<int64_t>(int64_t(cycle) * pps.slice_group_change_rate, size);  // mapUnitsInSliceGroup0
  switch (pps.slice_group_map_type) {
    case 0: {  // 8.2.2.1 interleaved
      int64_t i = 0;
      do {
        for (int g = 0; g <= ngroups_minus1 && i < size; i += pps.run_length[g++])
          for (int64_t j = 0; j < pps.run_length[g] && i + j < size; ++j) map[i + j] = uint8_t(g);
      } while (i < size);
      break;
    }
    case 1:  // 8.2.2.2 dispersed
      for (int64_t i = 0; i < size; ++i)
        map[i] = uint8_t(((i % W) + (((i / W) * (ngroups_minus1 + 1)) / 2)) % (ngroups_minus1 + 1));
      break;
    case 2:  // 8.2.2.3 foreground with left-over
      std::fill(map, map + size, uint8_t(ngroups_minus1));
      for (int g = ngroups_minus1 - 1; g >= 0; --g) {
        const int64_t y0 = pps.top_left[g] / W, x0 = pps.top_left[g] % W;
        const int64_t y1 = pps.bottom_right[g] / W, x1 = pps.bottom_right[g] % W;
        for (int64_t y = y0; y <= y1; ++y)
          for (int64_t x = x0; x <= x1; ++x) map[y * W + x] = uint8_t(g);
      }
      break;
    case 3: {  // 8.2.2.4 box-out
      std::fill(map, map + size, uint8_t(1));
      int64_t x = (W - dir) / 2, y = (H - dir) / 2;
      int64_t left = x, top = y, right = x, bottom = y;
      int64_t xdir = dir - 1, ydir = dir;
      int64_t vacant = 0;
      for (int64_t k = 0; k < units0; k += vacant) {
        vacant = map[y * W + x] == 1;
        if (vacant) map[y * W + x] = 0;
        if (xdir == -1 && x == left) {
          left = std::max<int64_t>(left - 1, 0);
          x = left;
          xdir = 0;
          ydir = 2 * dir - 1;
        } else if (xdir == 1 && x == right) {
          right = std::min<int64_t>(right + 1, W - 1);
          x = right;
          xdir = 0;
          ydir = 1 - 2 * dir;
        } else if (ydir == -1 && y == top) {
          top = std::max<int64_t>(top - 1, 0);
          y = top;
          xdir = 1 - 2 * dir;
          ydir = 0;
        } else if (ydir == 1 && y == bottom) {
          bottom = std::min<int64_t>(bottom + 1, H - 1);
          y = bottom;
          xdir = 2 * dir - 1;
          ydir = 0;
        } else {
          x += xdir;
          y += ydir;
        }
      }
      break;
    }
    case 4: {  // 8.2.2.5 raster scan
      const int64_t upper_left = dir ? size - units0 : units0;  // sizeOfUpperLeftGroup
      for (int64_t i = 0; i < size; ++i) map[i] = uint8_t(i < upper_left ? dir : 1 - dir);
      break;
    }
    case 5: {  // 8.2.2.6 wipe
      const int64_t upper_left = dir ? size - units0 : units0;
      int64_t k = 0;
      for (int64_t j = 0; j < W; ++j)
        for (int64_t i = 0; i < H; ++i) map[i * W + j] = uint8_t(k++ < upper_left ? dir : 1 - dir);
      break;
    }
    case 6:  // 8.2.2.7 explicit
      std::copy(pps.slice_group_id.begin(), pps.slice_group_id.begin() + size, map);
      break;
    default:
      std::fill(map, map + size, uint8_t(0));
      break;
  }
}

uint32_t next_mb_address(const uint8_t* map, uint32_t size, uint32_t n) {
  uint32_t i = n + 1;
  while (i < size && map[i] != map[n]) ++i;
  return i;
}

bool SliceGroupMap::current(const Sps& sps, const Pps& pps, uint32_t cycle, uint64_t generation) const {
  const bool uses_cycle = pps.num_slice_groups > 1 && pps.slice_group_map_type >= 3 && pps.slice_group_map_type <= 5;
  return valid_ && sps_ == &sps && pps_ == &pps && generation_ == generation && (!uses_cycle || cycle_ == cycle);
}

bool SliceGroupMap::update(const Sps& sps, const Pps& pps, uint32_t cycle, uint64_t generation) {
  if (current(sps, pps, cycle, generation)) return false;
  size_ = sps.pic_size_in_mbs();
  map_.resize(size_);
  next_.resize(size_);
  build_slice_group_map(sps, pps, cycle, map_.data());
  uint32_t last[kMaxSliceGroups];
  for (int g = 0; g < kMaxSliceGroups; ++g) {
    last[g] = size_;
    group_size_[g] = 0;
  }
  for (uint32_t i = size_; i-- > 0;) {
    const uint8_t g = map_[i];
    next_[i] = last[g];
    last[g] = i;
    ++group_size_[g];
  }
  valid_ = true;
  sps_ = &sps;
  pps_ = &pps;
  cycle_ = cycle;
  generation_ = generation;
  return true;
}

}  // namespace avc
