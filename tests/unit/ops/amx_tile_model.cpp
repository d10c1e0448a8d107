// The software model of the AMX tile registers (amx_tile_model.hpp).
#include "amx_tile_model.hpp"

#include <fmt/format.h>

#include <cstring>
#include <mutex>

namespace tunekit::test::amx_model {
namespace {

constexpr int kTiles = 8;
constexpr int kMaxRows = 16;
constexpr int kMaxBytes = 64;

struct Tile {
  int rows = 0;
  int colsb = 0;
  unsigned char data[kMaxRows][kMaxBytes] = {};
};

struct ThreadState {
  bool configured = false;
  Tile tiles[kTiles];
};

thread_local ThreadState state;
std::mutex counters_mutex;
Counters totals;

void violation(const std::string& what) {
  std::lock_guard lock(counters_mutex);
  if (totals.violations++ == 0) totals.first_violation = what;
}

void count(long Counters::*field) {
  std::lock_guard lock(counters_mutex);
  ++(totals.*field);
}

// Tile t of this thread when it may be used (configured, t in range, a shape set), else null.
Tile* usable(int t, const char* instruction) {
  if (!state.configured) {
    violation(fmt::format("{} before LDTILECFG", instruction));
    return nullptr;
  }
  if (t < 0 || t >= kTiles || state.tiles[t].rows == 0) {
    violation(fmt::format("{} on unconfigured tile {}", instruction, t));
    return nullptr;
  }
  return &state.tiles[t];
}

float bf16_at(const unsigned char* row, int element) {
  std::uint16_t bits;
  std::memcpy(&bits, row + 2 * element, 2);
  const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
  float x;
  std::memcpy(&x, &wide, 4);
  return x;
}

}  // namespace

void load_config(const void* config) {
  const auto* bytes = static_cast<const unsigned char*>(config);
  if (bytes[0] != 1) return violation(fmt::format("LDTILECFG with palette {}", bytes[0]));
  ThreadState fresh;
  for (int t = 0; t < kTiles; ++t) {
    std::uint16_t colsb;
    std::memcpy(&colsb, bytes + 16 + 2 * t, 2);
    const int rows = bytes[48 + t];
    if (rows > kMaxRows || colsb > kMaxBytes || (rows == 0) != (colsb == 0)) {
      return violation(fmt::format("LDTILECFG: tile {} is {} rows x {} bytes", t, rows, colsb));
    }
    fresh.tiles[t].rows = rows;
    fresh.tiles[t].colsb = colsb;
  }
  fresh.configured = true;
  state = fresh;
  count(&Counters::configs);
}

void release() {
  state = ThreadState{};
  count(&Counters::releases);
}

void zero(int t) {
  if (Tile* tile = usable(t, "TILEZERO")) std::memset(tile->data, 0, sizeof(tile->data));
}

void load(int t, const void* base, long stride) {
  Tile* tile = usable(t, "TILELOADD");
  if (tile == nullptr) return;
  for (int r = 0; r < tile->rows; ++r) {
    std::memcpy(tile->data[r], static_cast<const unsigned char*>(base) + r * stride, tile->colsb);
  }
}

void store(int t, void* base, long stride) {
  Tile* tile = usable(t, "TILESTORED");
  if (tile == nullptr) return;
  for (int r = 0; r < tile->rows; ++r) {
    std::memcpy(static_cast<unsigned char*>(base) + r * stride, tile->data[r], tile->colsb);
  }
}

void dot_bf16(int dst, int src1, int src2) {
  Tile* c = usable(dst, "TDPBF16PS");
  const Tile* a = usable(src1, "TDPBF16PS");
  const Tile* b = usable(src2, "TDPBF16PS");
  if (c == nullptr || a == nullptr || b == nullptr) return;
  if (c->rows != a->rows || c->colsb != b->colsb || a->colsb != 4 * b->rows) {
    return violation(fmt::format("TDPBF16PS shapes: dst {}x{}, src1 {}x{}, src2 {}x{}", c->rows,
                                 c->colsb, a->rows, a->colsb, b->rows, b->colsb));
  }
  for (int m = 0; m < c->rows; ++m) {
    for (int n = 0; n < c->colsb / 4; ++n) {
      float acc;
      std::memcpy(&acc, c->data[m] + 4 * n, 4);
      for (int k = 0; k < b->rows; ++k) {
        acc += bf16_at(a->data[m], 2 * k) * bf16_at(b->data[k], 2 * n) +
               bf16_at(a->data[m], 2 * k + 1) * bf16_at(b->data[k], 2 * n + 1);
      }
      std::memcpy(c->data[m] + 4 * n, &acc, 4);
    }
  }
  count(&Counters::dots);
}

Counters counters() {
  std::lock_guard lock(counters_mutex);
  return totals;
}

void reset() {
  std::lock_guard lock(counters_mutex);
  totals = Counters{};
}

}  // namespace tunekit::test::amx_model
