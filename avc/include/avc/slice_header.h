// avc/slice_header.h: the slice header (7.3.3) of baseline CAVLC slices (NAL unit types 1 and 5).
//
// parse_slice_header() reads every syntax element of the header from the slice's RBSP and stops where
// slice_data() begins (SliceHeader::data_bit). Everything before that bit is header ("skeleton") and is
// copied unchanged when a slice is re-coded. The fields the macroblock layer needs are kept in the header
// (slice type, QP, num_ref_idx_l0_active for ref_idx's te(v), constrained_intra_pred_flag, ...) together
// with pointers to the active SPS and PPS, valid until the ParamSets entry with that id is replaced.
//
// Refused (Status::kUnsupported): B, SP and SI slices; NAL unit types other than 1 and 5 (the caller should
// not pass them; types 2..4, data partitioning, are refused with their own message). Malformed
// (Status::kMalformed): values outside 7.4.3's ranges, a slice type not allowed in an IDR picture,
// first_mb_in_slice past the picture, a slice group map whose parameters do not fit the picture (checked
// by slice_group.h when the map is built), a header running past the end of the RBSP or reaching its
// stop bit. Missing (Status::kMissing): the PPS, or the SPS it names, has not been received.
//
// The sequence of ref_pic_list_modification() and dec_ref_pic_marking() operations is kept up to
// kMaxListedOps entries each (all are parsed; the counts are exact).
#pragma once

#include <cstddef>
#include <cstdint>

#include "avc/annexb.h"
#include "avc/error.h"
#include "avc/params.h"

namespace avc {

enum SliceType : uint8_t { kSliceP = 0, kSliceB = 1, kSliceI = 2, kSliceSP = 3, kSliceSI = 4 };

// "P", "B", "I", "SP", "SI" for slice_type % 5.
const char* slice_type_name(uint8_t slice_type);

constexpr int kMaxListedOps = 33;

struct RefPicListOp {
  uint8_t modification_of_pic_nums_idc;  // 0..2 (3 ends the list and is not stored)
  uint32_t value;                        // abs_diff_pic_num_minus1 (0, 1) or long_term_pic_num (2)
};

struct MmcoOp {
  uint8_t memory_management_control_operation;  // 1..6 (0 ends the list and is not stored)
  uint32_t difference_of_pic_nums_minus1;       // 1, 3
  uint32_t long_term_pic_num;                   // 2
  uint32_t long_term_frame_idx;                 // 3, 6
  uint32_t max_long_term_frame_idx_plus1;       // 4
};

struct SliceHeader {
  // NAL unit header
  uint8_t nal_unit_type = 0;
  uint8_t nal_ref_idc = 0;
  bool idr = false;  // IdrPicFlag

  uint32_t first_mb_in_slice = 0;
  uint8_t slice_type_raw = 0;  // slice_type as coded, 0..9 (5..9: all slices of the picture have this type)
  uint8_t slice_type = 0;      // slice_type % 5: kSliceP or kSliceI once accepted
  uint8_t pic_parameter_set_id = 0;
  uint32_t frame_num = 0;
  uint32_t idr_pic_id = 0;
  uint32_t pic_order_cnt_lsb = 0;
  int32_t delta_pic_order_cnt_bottom = 0;
  int32_t delta_pic_order_cnt[2] = {0, 0};
  uint32_t redundant_pic_cnt = 0;
  bool num_ref_idx_active_override_flag = false;
  // num_ref_idx_l0_active_minus1 + 1 (P slices; 0 in I slices). ref_idx_l0 is te(v) with range
  // num_ref_idx_l0_active - 1 (7.4.5.1): absent when 0, one inverted bit when 1, ue(v) otherwise.
  uint8_t num_ref_idx_l0_active = 0;

  bool ref_pic_list_modification_flag_l0 = false;
  uint8_t num_ref_pic_list_ops = 0;  // entries before the final 3
  RefPicListOp ref_pic_list_ops[kMaxListedOps];

  // dec_ref_pic_marking() (nal_ref_idc != 0)
  bool no_output_of_prior_pics_flag = false;       // IDR
  bool long_term_reference_flag = false;           // IDR
  bool adaptive_ref_pic_marking_mode_flag = false; // non-IDR
  uint16_t num_mmco = 0;                           // operations before the final 0
  MmcoOp mmco[kMaxListedOps];

  int32_t slice_qp_delta = 0;
  uint8_t slice_qp = 0;  // SliceQPY = 26 + pic_init_qp_minus26 + slice_qp_delta, 0..51
  uint8_t disable_deblocking_filter_idc = 0;
  int8_t slice_alpha_c0_offset_div2 = 0;
  int8_t slice_beta_offset_div2 = 0;
  uint32_t slice_group_change_cycle = 0;  // map types 3..5 only
  uint8_t slice_group_change_cycle_bits = 0;

  // Where slice_data() starts: a bit position in the RBSP (Rbsp::bytes, after the NAL header byte).
  uint64_t data_bit = 0;
  // Bit position of the rbsp_stop_one_bit in the RBSP (the slice data end there).
  uint64_t stop_bit = 0;

  // The active parameter sets and picture numbers the macroblock layer needs.
  const Sps* sps = nullptr;
  const Pps* pps = nullptr;
  uint32_t pic_width_in_mbs = 0;
  uint32_t pic_height_in_mbs = 0;
  uint32_t pic_size_in_mbs = 0;
  bool constrained_intra_pred_flag = false;
  uint8_t num_slice_groups = 1;

  bool is_i() const { return slice_type == kSliceI; }
  bool is_p() const { return slice_type == kSliceP; }
  bool redundant() const { return redundant_pic_cnt > 0; }
};

// Parses the header of the slice NAL unit with header byte nal_header and RBSP rbsp[0, size) (the bytes
// after the header byte, emulation prevention removed). The bit reader stops at data_bit; the header must
// end before the rbsp_stop_one_bit (a slice has at least one macroblock).
bool parse_slice_header(uint8_t nal_header, const uint8_t* rbsp, size_t size, const ParamSets& ps, SliceHeader& sh,
                        Error& err);

// The rbsp_stop_one_bit of rbsp[0, size): the bit position of its last 1 bit (SliceHeader::stop_bit).
// False when every bit is 0.
bool rbsp_stop_bit(const uint8_t* rbsp, size_t size, uint64_t* bit);

// 7.4.1.2.4: whether slice `cur` starts a new primary coded picture after slice `prev` (both primary
// slices, redundant_pic_cnt 0: redundant slices belong to the picture of the primary slice before them).
// Compares frame_num, pic_parameter_set_id, nal_ref_idc (zero / non-zero), pic_order_cnt_lsb,
// delta_pic_order_cnt_bottom, delta_pic_order_cnt[0..1], IdrPicFlag and idr_pic_id.
bool first_slice_of_new_picture(const SliceHeader& prev, const SliceHeader& cur);

}  // namespace avc
