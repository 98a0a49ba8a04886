// avc/params.h: sequence and picture parameter sets (7.3.2.1.1, 7.3.2.2), parsed from their RBSP, and the
// table of the sets a stream has sent so far (by id; a later NAL with the same id replaces the set).
//
// What is accepted. The entropy stage re-codes baseline CAVLC residual, so a parameter set is refused
// (Status::kUnsupported, the message names the feature) when it uses anything outside that, whatever its
// profile_idc says:
//   SPS: frame_mbs_only_flag 0 (interlace), chroma_format_idc other than 1 (4:2:0), bit depth other than
//        8, separate_colour_plane_flag, qpprime_y_zero_transform_bypass_flag, scaling matrices;
//   PPS: entropy_coding_mode_flag 1 (CABAC), weighted_pred_flag 1, weighted_bipred_idc other than 0,
//        transform_8x8_mode_flag 1, pic_scaling_matrix_present_flag 1.
// Any profile_idc is accepted under these conditions (66 baseline, but also e.g. a 77/100 stream written
// with CAVLC and without those tools); B, SP and SI slices and data partitioning are refused where they
// appear (slice_header.h, annexb.h). second_chroma_qp_index_offset (in a PPS with the 7.3.2.2 extension)
// only matters for reconstruction and is kept.
//
// Value ranges of 7.4.2.1.1 / 7.4.2.2 are checked (Status::kMalformed otherwise); in addition the picture is
// limited to kMaxMbsPerDim macroblocks per side and kMaxPicSizeInMbs macroblocks in all (level 6.2's
// MaxFS), so a damaged size field cannot ask for gigabytes. The VUI (Annex E), including HRD parameters, is
// parsed completely; after it (or after the PPS fields) rbsp_trailing_bits must follow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "avc/error.h"

namespace avc {

constexpr uint32_t kMaxMbsPerDim = 2048;
constexpr uint32_t kMaxPicSizeInMbs = 139264;  // Table A-1, level 6.2 MaxFS
constexpr int kMaxSps = 32;
constexpr int kMaxPps = 256;
constexpr int kMaxSliceGroups = 8;

// Annex E (only the fields someone may print; the rest is parsed and dropped).
struct Vui {
  bool aspect_ratio_info_present_flag = false;
  uint8_t aspect_ratio_idc = 0;
  uint16_t sar_width = 0, sar_height = 0;
  bool video_signal_type_present_flag = false;
  bool timing_info_present_flag = false;
  uint32_t num_units_in_tick = 0, time_scale = 0;
  bool fixed_frame_rate_flag = false;
  bool nal_hrd_parameters_present_flag = false;
  bool vcl_hrd_parameters_present_flag = false;
  bool pic_struct_present_flag = false;
  bool bitstream_restriction_flag = false;
  uint32_t max_num_reorder_frames = 0, max_dec_frame_buffering = 0;
};

struct Sps {
  uint8_t profile_idc = 0;
  uint8_t constraint_flags = 0;  // constraint_set0_flag in bit 7 ... constraint_set5_flag in bit 2 (as coded)
  uint8_t level_idc = 0;
  uint8_t seq_parameter_set_id = 0;
  uint8_t chroma_format_idc = 1;  // 1 unless a high profile codes it (and then it must be 1)
  uint8_t log2_max_frame_num = 4;  // log2_max_frame_num_minus4 + 4: bits of frame_num
  uint8_t pic_order_cnt_type = 0;
  uint8_t log2_max_pic_order_cnt_lsb = 4;  // bits of pic_order_cnt_lsb (type 0)
  bool delta_pic_order_always_zero_flag = false;
  int32_t offset_for_non_ref_pic = 0;
  int32_t offset_for_top_to_bottom_field = 0;
  uint8_t num_ref_frames_in_pic_order_cnt_cycle = 0;
  int32_t offset_for_ref_frame[255] = {};
  uint32_t max_num_ref_frames = 0;
  bool gaps_in_frame_num_value_allowed_flag = false;
  uint32_t pic_width_in_mbs = 0;          // pic_width_in_mbs_minus1 + 1 (PicWidthInMbs)
  uint32_t pic_height_in_map_units = 0;   // pic_height_in_map_units_minus1 + 1 (PicHeightInMapUnits)
  bool frame_mbs_only_flag = true;        // always true once accepted
  bool direct_8x8_inference_flag = false;
  bool frame_cropping_flag = false;
  uint32_t frame_crop_left_offset = 0, frame_crop_right_offset = 0;
  uint32_t frame_crop_top_offset = 0, frame_crop_bottom_offset = 0;
  bool vui_parameters_present_flag = false;
  Vui vui;

  // Derived (frame_mbs_only, 4:2:0): FrameHeightInMbs = PicHeightInMapUnits, map units are macroblocks.
  uint32_t pic_size_in_mbs() const { return pic_width_in_mbs * pic_height_in_map_units; }
  uint32_t width() const { return pic_width_in_mbs * 16; }   // luma samples, before cropping
  uint32_t height() const { return pic_height_in_map_units * 16; }
  // Cropped size (7.4.2.1.1: CropUnitX = CropUnitY = 2 for 4:2:0 frames).
  uint32_t crop_width() const { return width() - 2 * (frame_crop_left_offset + frame_crop_right_offset); }
  uint32_t crop_height() const { return height() - 2 * (frame_crop_top_offset + frame_crop_bottom_offset); }
};

struct Pps {
  uint8_t pic_parameter_set_id = 0;
  uint8_t seq_parameter_set_id = 0;
  bool entropy_coding_mode_flag = false;  // always false once accepted
  bool bottom_field_pic_order_in_frame_present_flag = false;
  uint8_t num_slice_groups = 1;  // num_slice_groups_minus1 + 1, 1..8
  uint8_t slice_group_map_type = 0;
  uint32_t run_length[kMaxSliceGroups] = {};    // type 0: run_length_minus1 + 1
  uint32_t top_left[kMaxSliceGroups] = {};      // type 2 (the last group has none)
  uint32_t bottom_right[kMaxSliceGroups] = {};
  bool slice_group_change_direction_flag = false;  // types 3..5
  uint32_t slice_group_change_rate = 1;             // types 3..5: slice_group_change_rate_minus1 + 1
  uint32_t pic_size_in_map_units = 0;               // type 6: pic_size_in_map_units_minus1 + 1
  std::vector<uint8_t> slice_group_id;              // type 6: one per map unit
  uint8_t num_ref_idx_l0_default_active = 1;        // num_ref_idx_l0_default_active_minus1 + 1, 1..32
  uint8_t num_ref_idx_l1_default_active = 1;
  bool weighted_pred_flag = false;
  uint8_t weighted_bipred_idc = 0;
  int8_t pic_init_qp_minus26 = 0;
  int8_t pic_init_qs_minus26 = 0;
  int8_t chroma_qp_index_offset = 0;
  bool deblocking_filter_control_present_flag = false;
  bool constrained_intra_pred_flag = false;
  bool redundant_pic_cnt_present_flag = false;
  bool transform_8x8_mode_flag = false;
  int8_t second_chroma_qp_index_offset = 0;  // = chroma_qp_index_offset when not coded
};

// Parse the RBSP of an SPS / PPS NAL unit (the bytes after the NAL header, emulation prevention removed,
// i.e. Rbsp::bytes). On failure err.status/message are set (not nal_index: the caller knows it).
bool parse_sps(const uint8_t* rbsp, size_t size, Sps& sps, Error& err);
bool parse_pps(const uint8_t* rbsp, size_t size, Pps& pps, Error& err);

// The parameter sets received so far. store_*() parses and, only when the set is accepted, replaces the
// set with that id. Holding the sets behind unique_ptr keeps the table small and the pointers handed out
// by sps()/pps() stable until that id is replaced.
class ParamSets {
 public:
  bool store_sps(const uint8_t* rbsp, size_t size, Error& err);
  bool store_pps(const uint8_t* rbsp, size_t size, Error& err);
  // nullptr when that id has not been received.
  const Sps* sps(uint32_t id) const { return id < kMaxSps ? sps_[id].get() : nullptr; }
  const Pps* pps(uint32_t id) const { return id < kMaxPps ? pps_[id].get() : nullptr; }
  // A number that changes with every accepted store and is never repeated in the process (not even by
  // another ParamSets), so a cache of something derived from the sets, like a slice group map, can tell
  // that a set changed even when a new table reuses the memory of an old one.
  uint64_t generation() const { return generation_; }
  // The id of the last SPS / PPS stored (-1 none).
  int last_sps_id() const { return last_sps_; }
  int last_pps_id() const { return last_pps_; }

 private:
  std::unique_ptr<Sps> sps_[kMaxSps];
  std::unique_ptr<Pps> pps_[kMaxPps];
  std::unique_ptr<Sps> sps_scratch_;
  std::unique_ptr<Pps> pps_scratch_;
  uint64_t generation_ = 0;
  int last_sps_ = -1, last_pps_ = -1;
};

// The profile's name ("Baseline", "Constrained Baseline", "Main", "Extended", "High", ...).
const char* profile_name(uint8_t profile_idc, uint8_t constraint_flags);

}  // namespace avc
