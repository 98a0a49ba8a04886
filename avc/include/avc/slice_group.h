// avc/slice_group.h: slice group maps (FMO, 8.2.2) for frame pictures (frame_mbs_only_flag 1, so map units
// are macroblocks and MbToSliceGroupMap = mapUnitToSliceGroupMap, 8.2.2.8).
//
// A slice holds the macroblocks of its slice group from first_mb_in_slice on, in the order of
// NextMbAddress (8.2.2.8 / 7.4.3): the next address with the same slice group. With one slice group that is
// n + 1.
//
// Types (slice_group_map_type, 8.2.2.1-8.2.2.7): 0 interleaved runs, 1 dispersed, 2 foreground boxes with a
// left-over group, 3 box-out, 4 raster scan, 5 wipe, 6 explicit (slice_group_id per map unit). Types 3..5
// evolve with slice_group_change_cycle (a slice header field, the same in all slices of a picture):
// mapUnitsInSliceGroup0 = Min(slice_group_change_cycle * SliceGroupChangeRate, PicSizeInMapUnits).
#pragma once

#include <cstdint>
#include <vector>

#include "avc/error.h"
#include "avc/params.h"

namespace avc {

// Whether pps's slice group parameters fit sps's picture (7.4.2.2): type 0 runs at most PicSizeInMapUnits,
// type 2 boxes inside the picture with top_left left of and above bottom_right, types 3..5 a change rate of at
// most PicSizeInMapUnits, type 6 exactly PicSizeInMapUnits ids. Status::kMalformed otherwise.
// parse_slice_header() calls it, so a parsed slice header guarantees a well-defined map.
bool check_slice_group_params(const Sps& sps, const Pps& pps, Error& err);

// Bits of slice_group_change_cycle: Ceil(Log2(PicSizeInMapUnits / SliceGroupChangeRate + 1)), the division
// exact (not an integer division), 7.4.3.
int slice_group_change_cycle_bits(uint32_t pic_size_in_map_units, uint32_t slice_group_change_rate);

// mapUnitToSliceGroupMap of 8.2.2.1-8.2.2.7 (slice group of every macroblock, raster order) into
// map[0, sps.pic_size_in_mbs()). Parameters must have passed check_slice_group_params().
void build_slice_group_map(const Sps& sps, const Pps& pps, uint32_t slice_group_change_cycle, uint8_t* map);

// NextMbAddress(n) of 8.2.2.8 on a map of pic_size_in_mbs entries: the first address after n in the same
// slice group, or pic_size_in_mbs when there is none.
uint32_t next_mb_address(const uint8_t* map, uint32_t pic_size_in_mbs, uint32_t n);

// The map of the current picture with NextMbAddress precomputed. update() rebuilds only when the parameter
// sets (by ParamSets::generation()), their identity or slice_group_change_cycle changed, so calling it for
// every slice costs nothing in the common case; no allocation once the largest picture has been seen.
class SliceGroupMap {
 public:
  // Whether update() with these arguments would keep the map as it is.
  bool current(const Sps& sps, const Pps& pps, uint32_t slice_group_change_cycle, uint64_t params_generation) const;
  // Returns true when the map was rebuilt.
  bool update(const Sps& sps, const Pps& pps, uint32_t slice_group_change_cycle, uint64_t params_generation);
  const uint8_t* map() const { return map_.data(); }  // slice group of each macroblock
  uint32_t size() const { return size_; }             // PicSizeInMbs
  uint32_t next(uint32_t n) const { return next_[n]; }  // NextMbAddress(n), n < size()
  uint8_t group(uint32_t mb) const { return map_[mb]; }
  // Macroblocks in slice group g.
  uint32_t group_size(int g) const { return g >= 0 && g < kMaxSliceGroups ? group_size_[g] : 0; }

 private:
  std::vector<uint8_t> map_;
  std::vector<uint32_t> next_;
  uint32_t size_ = 0;
  uint32_t group_size_[kMaxSliceGroups] = {};
  bool valid_ = false;
  const Sps* sps_ = nullptr;
  const Pps* pps_ = nullptr;
  uint32_t cycle_ = 0;
  uint64_t generation_ = 0;
};

}  // namespace avc
