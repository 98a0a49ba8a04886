// Acquire / release accesses to global flags (gpu scope) and programmatic dependent launch (PDL), shared
// by the CAVLCU kernels. Internal.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/device/memory.cuh"
#include "gpu/device/pdl.cuh"

namespace cavlc {
namespace {

using gpu::device::load_acquire;
using gpu::device::store_release;
using gpu::launch_pdl;
using gpu::pdl_trigger;
using gpu::pdl_wait;

}  // namespace
}  // namespace cavlc
