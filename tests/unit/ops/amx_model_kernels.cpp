// tunekit's bf16 GEMM through AMX tiles (src/ops/native_amx.inc) built on the software model of
// the tile registers (amx_tile_model.hpp), inside the x86-64-v3 kernels (tests/CMakeLists.txt
// compiles this file for that level): the route's packing, blocking, threading and tile use run
// on any CPU with AVX2, under the sanitizers too. Only the tile instructions are modelled.
#include "amx_tile_model.hpp"

#define TUNEKIT_NATIVE_LEVEL amx_model
#define TUNEKIT_NATIVE_LEVEL_UPPER AmxModel
#define TUNEKIT_NATIVE_LEVEL_NAME "x86-64-v3 with modelled AMX tiles"
#define TUNEKIT_NATIVE_WIDTH 8
#define TUNEKIT_NATIVE_AMX 1
#include "ops/native_kernels.inc"

namespace tunekit::test {

const ops::detail::NativeBf16Kernels& amx_model_route() {
  return *ops::detail::kNativeKernelsAmxModel.bf16_tiles;
}

}  // namespace tunekit::test
