// A software model of the AMX tile registers (AMX-TILE and AMX-BF16, palette 1), after the
// instruction descriptions of the Intel 64 and IA-32 Architectures Software Developer's Manual,
// vol. 2: LDTILECFG, TILERELEASE, TILEZERO, TILELOADD, TILESTORED, TDPBF16PS. The tile state is
// per thread, as on the hardware. Where the hardware raises #UD (a tile instruction before
// LDTILECFG, an unconfigured tile, operand shapes that do not match), the model counts a
// violation and keeps the first message. Defines the TUNEKIT_TILE_* macros native_amx.inc uses.
// Not modelled: bf16 denormals (the hardware flushes them; the tests use normal values).
#pragma once

#include <cstdint>
#include <string>

namespace tunekit::test::amx_model {

/// LDTILECFG from the 64-byte configuration at `config`.
void load_config(const void* config);
/// TILERELEASE: the tiles return to the unconfigured state.
void release();
/// TILEZERO tile t.
void zero(int t);
/// TILELOADD: row r of tile t from base + r * stride (bytes), its configured rows x colsb bytes.
void load(int t, const void* base, long stride);
/// TILESTORED: row r of tile t to base + r * stride (bytes).
void store(int t, void* base, long stride);
/// TDPBF16PS dst += src1 . src2 over bf16 pairs, fp32 accumulation.
void dot_bf16(int dst, int src1, int src2);

/// Counters of all threads since reset(): violations (with the first one's message), TDPBF16PS
/// executed, LDTILECFG executed and TILERELEASE executed.
struct Counters {
  long violations = 0;
  long dots = 0;
  long configs = 0;
  long releases = 0;
  std::string first_violation;
};
Counters counters();
/// Zeroes the counters.
void reset();

}  // namespace tunekit::test::amx_model

#define TUNEKIT_TILE_CONFIG(config) ::tunekit::test::amx_model::load_config(config)
#define TUNEKIT_TILE_RELEASE() ::tunekit::test::amx_model::release()
#define TUNEKIT_TILE_ZERO(t) ::tunekit::test::amx_model::zero(t)
#define TUNEKIT_TILE_LOAD(t, base, stride) ::tunekit::test::amx_model::load(t, base, stride)
#define TUNEKIT_TILE_STORE(t, base, stride) ::tunekit::test::amx_model::store(t, base, stride)
#define TUNEKIT_TILE_DOT(dst, src1, src2) ::tunekit::test::amx_model::dot_bf16(dst, src1, src2)
